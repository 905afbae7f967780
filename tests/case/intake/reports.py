"""Small tracker reports written for these tests, in the shapes each tracker exports.

Every text is made up here (no copied report); the field names and shapes
are those of the GitHub REST API, ``gh issue view --json`` and GitLab's API.
"""

from __future__ import annotations

from typing import Any

# An issue form as GitHub renders it into the body: "### Label", the answer,
# "_No response_" for a field left empty; issue forms come with CRLF line ends.
FORM_BODY = "\r\n".join(
    [
        "### Current Behaviour",
        "",
        "The brewmaster near the inn never hands out the keg quest, he just stands there.",
        "",
        "### Expected Blizzlike Behaviour",
        "",
        "He offers the quest once you are level 10.",
        "",
        "### Source",
        "",
        "_No response_",
        "",
        "### Steps to reproduce the problem",
        "",
        "1. `.quest add 91001`",
        "2. Talk to the brewmaster",
        "",
        "```",
        "### this line is a log line, not a heading",
        "```",
        "",
        "### Extra Notes",
        "",
        "_No response_",
        "",
        "### FC rev. hash/commit",
        "",
        "5e3a9c1",
        "",
        "### Operating system",
        "",
        "Debian 12",
        "",
        "### Custom changes or Modules",
        "",
        "none",
    ]
)

# The older TrinityCore template: bold labels, answers beside or below them,
# instructions in HTML comments.
LABEL_BODY = "\n".join(
    [
        "<!--- Please fill in every field. --->",
        "**Description:**",
        "Creatures in the cave respawn far too fast.",
        "",
        "**Current behaviour:**",
        "<!--- What happens now. --->",
        "They are back after ten seconds.",
        "",
        "**Expected behaviour:**",
        "<!--- What should happen. --->",
        "",
        "**Steps to reproduce the problem:**",
        "1. Kill one",
        "2. Wait",
        "",
        "**Branch(es):** 3.3.5",
        "",
        "**TC rev. hash/commit:** TrinityCore rev. 9F0d12ab34cd 2020-05-04 (3.3.5 branch)",
        "",
        "**TDB version:** 335.20041",
        "",
        "**Operating system**: Ubuntu 20.04",
    ]
)


def rest_issue(**changes: Any) -> dict[str, Any]:
    """A GitHub REST API issue object (the fields this import reads, and a few it does not)."""
    issue: dict[str, Any] = {
        "url": "https://api.github.com/repos/ExampleCore/ExampleCore-Cata/issues/812",
        "repository_url": "https://api.github.com/repos/ExampleCore/ExampleCore-Cata",
        "html_url": "https://github.com/ExampleCore/ExampleCore-Cata/issues/812",
        "id": 900000812,
        "number": 812,
        "title": "Brewmaster does not offer the keg quest",
        "user": {"login": "keg-tester", "id": 4242},
        "labels": [{"id": 1, "name": "Quest", "color": "ededed"}, {"id": 2, "name": "Confirmed"}],
        "state": "open",
        "comments": 3,
        "created_at": "2024-05-01T12:00:00Z",
        "body": FORM_BODY,
    }
    issue.update(changes)
    return issue


def gh_issue(**changes: Any) -> dict[str, Any]:
    """What ``gh issue view 77 --json number,title,body,url,author,labels,createdAt,comments``
    prints."""
    issue: dict[str, Any] = {
        "number": 77,
        "title": "Creatures in the cave respawn too fast",
        "body": LABEL_BODY,
        "url": "https://github.com/ExampleCore/ExampleCore/issues/77",
        "author": {"id": "U_1", "is_bot": False, "login": "cave-walker", "name": ""},
        "labels": [{"id": "L_1", "name": "Creature", "description": "", "color": "fff"}],
        "createdAt": "2020-05-06T07:08:09Z",
        "comments": [
            {
                "author": {"login": "core-dev"},
                "authorAssociation": "MEMBER",
                "body": "The spawn group has respawn time 10 instead of 300.",
                "createdAt": "2020-05-07T10:00:00Z",
                "url": "https://github.com/ExampleCore/ExampleCore/issues/77#issuecomment-1",
            },
            {"author": None, "body": "Still happens for me.", "createdAt": None},
        ],
    }
    issue.update(changes)
    return issue


def gitlab_issue(**changes: Any) -> dict[str, Any]:
    """A GitLab API issue object."""
    issue: dict[str, Any] = {
        "id": 5001,
        "iid": 31,
        "project_id": 9,
        "title": "Gnome mage trainer teaches the wrong rank",
        "description": (
            "The trainer offers rank 3 at level 4.\n\nSee "
            "https://gitlab.example.org/emu/core/-/commit/ABCDEF0123456789 for the change"
        ),
        "state": "opened",
        "created_at": "2023-01-02T03:04:05.000Z",
        "labels": ["trainer", "spell"],
        "author": {"id": 3, "username": "gnomish", "name": "G"},
        "web_url": "https://gitlab.example.org/emu/core/-/issues/31",
        "user_notes_count": 2,
    }
    issue.update(changes)
    return issue
