"""The envelope of an investigation-request-v1 batch, written in one place.

The batch names the package revision it was made for, so the router can
refuse it once the case has moved on; every caller that builds a batch (the
controller, the demo) takes those three names from the manifest here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REQUEST_FORMAT = "viano-investigation-request"


def request_batch(
    manifest: Mapping[str, Any], requests: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A batch of ``requests`` for the package revision ``manifest`` describes."""
    return {
        "format": REQUEST_FORMAT,
        "format_version": 1,
        "case_id": manifest["case_id"],
        "package_id": manifest["package_id"],
        "analysis_revision": manifest["analysis_revision"],
        "requests": [dict(request) for request in requests],
    }
