"""Demo of the main job: one tracker issue becomes a case with leads and a report.

    python -m viano_bug_analysis.demo_case --out DIR --db-port N --db-password-file F

What ``make demo`` runs (scripts/demo.sh starts the throwaway MariaDB of the
tests, loaded with the small sample world, and stops it afterwards): the
bundled issue ``samples/demo/issue.json`` (``gh issue view --json`` form, a
player's words) is imported as a case spec, the bundled source history
``samples/demo/history`` becomes a tiny git repository (one commit per
numbered folder, fixed names and dates, so its commit IDs are the same on
every machine and the issue can name the one it was reported against), and
the case is built against both exactly as ``vba case build --project-config``
does: its summary (leads first) is printed, then the case report is written
and its path shown. Everything lands in ``DIR``, which is replaced on each
run; the sample folder is only read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# The bundled issue and history, in the repository (not in the installed package):
# `make demo` runs from the repository root and names the folder, as demo.py's
# sample; a source checkout also finds it next to the package.
SAMPLE = Path("samples") / "demo"
_BESIDE_THE_PACKAGE = Path(__file__).resolve().parents[2] / "samples" / "demo"
# Fixed, so the history's commit IDs do not depend on who runs it or when.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Demo Maintainer",
    "GIT_AUTHOR_EMAIL": "maintainer@example.invalid",
    "GIT_COMMITTER_NAME": "Demo Maintainer",
    "GIT_COMMITTER_EMAIL": "maintainer@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
MESSAGE = "message.txt"
WORLD = "cata_world"


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, **_GIT_ENV}
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def source_history(history: Path, repo: Path) -> list[str]:
    """A git repository at ``repo``: one commit per folder of ``history`` (in name
    order, each laid over the ones before, its ``message.txt`` as the message);
    returns the commit IDs, oldest first."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    commits = []
    for day, step in enumerate(sorted(p for p in history.iterdir() if p.is_dir()), start=1):
        shutil.copytree(step, repo, dirs_exist_ok=True, ignore=shutil.ignore_patterns(MESSAGE))
        _git(repo, "add", "-A")
        message = (step / MESSAGE).read_text(encoding="utf-8").strip()
        _git(repo, "commit", "-q", "-m", message, date=f"2026-10-{day:02d}T12:00:00+00:00")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    return commits


def project_config(out: Path, repo: Path, commit: str, port: int, password_file: Path) -> Path:
    """The project config of the demo: the history's newest commit and the sample
    world, every table the bundled profile reads allowlisted."""
    from viano_bug_analysis.enrichment import vcore_profile
    from viano_bug_analysis.enrichment.profile_check import needs

    tables = "".join(f'    "{table}",\n' for table in needs(vcore_profile()))
    config = out / "project.toml"
    config.write_text(
        "[source]\n"
        f'repository = "{repo.name}"\n'
        'url = "https://git.example.invalid/vcore.git"\n'
        f'commit = "{commit}"\n\n'
        "[database]\n"
        'host = "127.0.0.1"\n'
        f"port = {port}\n"
        'user = "viano_reader"\n'
        f'password_file = "{password_file}"\n'
        f'snapshot_id = "{WORLD}@demo"\n'
        f'name = "{WORLD}"\n\n'
        "[database.allow]\n"
        f"{WORLD} = [\n{tables}]\n",
        encoding="utf-8",
    )
    return config


def run(out: Path, port: int, password_file: Path, sample: Path = SAMPLE) -> int:
    from viano_bug_analysis.cli import main

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    commits = source_history(sample / "history", out / "vcore")
    config = project_config(out, out / "vcore", commits[-1], port, password_file.resolve())
    spec, package, report = out / "spec.json", out / "case", out / "case-report.html"
    print(f"== the tracker issue: {sample / 'issue.json'}", flush=True)
    steps: list[tuple[str, list[str]]] = [
        ("vba case import", ["case", "import", str(sample / "issue.json"), "-o", str(spec)]),
        (
            "vba case build (leads and summary)",
            ["case", "build", str(spec), str(package), "--project-config", str(config)],
        ),
        ("vba report", ["report", str(package), "-o", str(report)]),
    ]
    for title, argv in steps:
        print(f"\n== {title}", flush=True)
        code = main(argv)
        sys.stdout.flush()
        if code != 0:
            print(f"demo: `vba {' '.join(argv[:2])}` ended with exit {code}", file=sys.stderr)
            return code
    print(f"\n== the case report: {report}")
    print(f"   (open it in a browser; the case package is {package})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viano_bug_analysis.demo_case")
    parser.add_argument("--out", type=Path, required=True, help="output folder (replaced)")
    parser.add_argument("--db-port", type=int, required=True, help="the sample world's port")
    parser.add_argument(
        "--db-password-file", type=Path, required=True, help="the reader's password file"
    )
    parser.add_argument(
        "--sample",
        type=Path,
        default=None,
        help="the folder with issue.json and history/ (default: samples/demo of the "
        "repository, from its root or beside a source checkout's package)",
    )
    args = parser.parse_args(argv)
    sample = args.sample or next(
        (p for p in (SAMPLE, _BESIDE_THE_PACKAGE) if (p / "issue.json").is_file()), SAMPLE
    )
    if not (sample / "issue.json").is_file() or not (sample / "history").is_dir():
        print(
            f"demo: no bundled sample at {sample} (issue.json and history/ expected): run it "
            "from the repository root (make demo), or name the folder with --sample",
            file=sys.stderr,
        )
        return 2
    return run(args.out, args.db_port, args.db_password_file, sample)


if __name__ == "__main__":
    raise SystemExit(main())
