"""scripts/llm_test_server.sh: the kept wheel and venv are keyed by the build.

Only the `where` subcommand runs here (it builds nothing): which directory a
build key names, and whether a wheel or a ready venv is found there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "llm_test_server.sh"
VERSION = "0.3.36"
NATIVE = "-DGGML_NATIVE=ON"


def where(home: Path, cpu_args: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VBA_")}
    env["VBA_LLM_SERVER_HOME"] = str(home)
    if cpu_args is not None:
        env["VBA_LLM_SERVER_CPU_ARGS"] = cpu_args
    done = subprocess.run(
        ["bash", str(SCRIPT), "where"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=True,
    )
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def test_the_default_build_is_portable(tmp_path: Path) -> None:
    args = where(tmp_path)["cmake_args"].split()
    assert "-DGGML_NATIVE=OFF" in args
    for on in ("AVX", "AVX2", "FMA", "F16C", "BMI2", "SSE42"):
        assert f"-DGGML_{on}=ON" in args
    for off in ("AVX512", "AMX_TILE", "AMX_INT8", "AMX_BF16", "CPU_ALL_VARIANTS"):
        assert f"-DGGML_{off}=OFF" in args


def test_other_flags_are_another_key_and_directory(tmp_path: Path) -> None:
    portable, again, native = where(tmp_path), where(tmp_path), where(tmp_path, NATIVE)
    assert portable == again
    assert native["key"] != portable["key"]
    assert native["build_dir"] != portable["build_dir"]
    assert native["venv"] != portable["venv"]
    for found in (portable, native):
        assert found["key"] in Path(found["build_dir"]).name
        assert VERSION in Path(found["build_dir"]).name


def test_an_old_native_layout_is_not_reused(tmp_path: Path) -> None:
    # What the script kept before the key: a native wheel and a venv marked ready.
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / f"llama_cpp_python-{VERSION}-cp311-cp311-linux_x86_64.whl").touch()
    old_venv = tmp_path / f"llm-server-{VERSION}"
    (old_venv / "bin").mkdir(parents=True)
    (old_venv / ".vba-ready").touch()
    found = where(tmp_path)
    assert found["wheel"] == ""
    assert found["ready"] == "no"
    assert Path(found["venv"]) != old_venv
    assert Path(found["build_dir"]).parent == tmp_path


def test_a_wheel_of_the_same_key_is_found(tmp_path: Path) -> None:
    wheels = Path(where(tmp_path)["build_dir"]) / "wheels"
    wheels.mkdir(parents=True)
    wheel = wheels / f"llama_cpp_python-{VERSION}-cp311-cp311-linux_x86_64.whl"
    wheel.touch()
    assert where(tmp_path)["wheel"] == str(wheel)
    assert where(tmp_path, NATIVE)["wheel"] == ""
