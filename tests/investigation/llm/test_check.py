"""`vba llm check` against in-process fake servers, and the real test server when present."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm.scripted_llm_server import refused_url
from tests.real_llm_server import real_llm_server
from viano_bug_analysis.cli import main
from viano_bug_analysis.investigation.llm.check import PROBE_MAX_TOKENS, TEXT_PROBE_MAX_TOKENS

CANARY = "CANARY-model-text"


@dataclass
class FakeServer:
    """An OpenAI-compatible fake. ``schema`` is what it does with json_schema:
    "honour", "refuse_500" (llama-cpp-python), "refuse_400", "prose" (ignores it);
    ``grammar`` what it does with a GBNF grammar member: "honour" (the llama.cpp
    family) or "refuse_400" (OpenAI: an unrecognized argument)."""

    schema: str = "honour"
    grammar: str = "honour"
    status_for_all: int | None = None
    listing: dict[str, Any] | None = field(
        default_factory=lambda: {"object": "list", "data": [{"id": "m", "object": "model"}]}
    )
    props: dict[str, Any] | None = None
    cached: bool = False
    posts: list[dict[str, Any]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)
    base_url: str = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.posts.append(body)
        if self.status_for_all is not None:
            return self.status_for_all, {"error": {"message": CANARY}}
        kind = (body.get("response_format") or {}).get("type", "text")
        if "grammar" in body:
            if self.grammar.startswith("refuse_"):
                return int(self.grammar.removeprefix("refuse_")), {"error": {"message": CANARY}}
            kind = "json_schema" if body["grammar"].startswith("root ::= ") else "text"
        if kind == "json_schema" and self.schema.startswith("refuse_") and "grammar" not in body:
            return int(self.schema.removeprefix("refuse_")), {"error": {"message": CANARY}}
        if kind == "text" or (kind == "json_schema" and self.schema == "prose"):
            content = f"Sure! {CANARY}"
        elif kind == "json_schema":
            content = '{"ok": true}'
        else:
            content = json.dumps({"ok": True, "c": CANARY})
        usage: dict[str, Any] = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        if self.cached:
            usage["prompt_tokens_details"] = {"cached_tokens": 8}
        choice = {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        return 200, {"choices": [choice], "usage": usage, "model": "m"}

    def get(self, path: str) -> tuple[int, Any]:
        self.gets.append(path)
        if self.status_for_all in (401, 403):
            return self.status_for_all, {"error": CANARY}
        if path == "/v1/models" and self.listing is not None:
            return 200, self.listing
        if path == "/props" and self.props is not None:
            return 200, self.props
        return 404, {"error": CANARY}


@contextlib.contextmanager
def serving(fake: FakeServer) -> Iterator[FakeServer]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, document: Any) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(*fake.get(self.path))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self._send(*fake.answer(json.loads(self.rfile.read(length))))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _config(tmp_path: Path, *urls: str, model: str = "m") -> Path:
    path = tmp_path / "investigation.toml"
    listed = ", ".join(json.dumps(u) for u in urls)
    path.write_text(f"[llm]\nbase_urls = [{listed}]\nmodel = {json.dumps(model)}\n")
    return path


def _check(
    capsys: pytest.CaptureFixture[str], config: Path, *, as_json: bool = True
) -> tuple[int, Any, str]:
    code = main(["llm", "check", "--config", str(config), *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert CANARY not in out and CANARY not in err
    return code, json.loads(out) if as_json else out, err


def test_a_closed_port_is_exit_3_with_one_typed_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, err = _check(capsys, _config(tmp_path, refused_url()))
    assert code == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])
    assert error["error"] == "llm_unavailable"
    assert error["details"] == {
        "endpoint_index": 0,
        "attempts": 1,
        "last_reason": "connection_refused",
    }
    endpoint = document["endpoints"][0]
    assert endpoint["reachable"] is False and endpoint["probes"] == {}
    assert document["tokens"]["total_tokens"] == 0


def test_a_server_that_refuses_json_schema_is_a_finding_not_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(FakeServer(schema="refuse_500")) as fake:
        code, document, err = _check(capsys, _config(tmp_path, fake.base_url))
    assert code == 0 and err == ""
    endpoint = document["endpoints"][0]
    probes = endpoint["probes"]
    assert probes["json_schema"]["outcome"] == "refused"
    assert probes["json_schema"]["status"] == 500
    assert probes["grammar"]["outcome"] == "honoured"
    # auto stops at the grammar: json_object is not asked.
    assert probes["json_object"] == {"outcome": "skipped", "status": None, "latency_ms": None}
    assert probes["text"]["outcome"] == "answered"
    assert endpoint["formats"] == ["grammar"]
    # Two answers with usage: what the check spent, and nothing more.
    assert document["tokens"] == {
        "prompt_tokens": 24,
        "completion_tokens": 10,
        "total_tokens": 34,
        "probe_answers": 2,
        "answers_without_usage": 0,
    }


def test_a_server_that_answers_prose_to_json_schema_does_not_honour_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(FakeServer(schema="prose", grammar="refuse_400")) as fake:
        code, document, _ = _check(capsys, _config(tmp_path, fake.base_url))
    assert code == 0
    probes = document["endpoints"][0]["probes"]
    assert probes["json_schema"]["outcome"] == "ignored"
    assert (probes["grammar"]["outcome"], probes["grammar"]["status"]) == ("refused", 400)
    assert document["endpoints"][0]["formats"] == ["json_object"]


def test_a_fixed_format_is_probed_even_where_auto_would_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "http://127.0.0.1:9/v1")
    with serving(FakeServer()) as fake:
        config.write_text(
            config.read_text().replace("http://127.0.0.1:9/v1", fake.base_url)
            + 'response_format = "json_object"\n'
        )
        code, document, _ = _check(capsys, config)
    probes = document["endpoints"][0]["probes"]
    assert code == 0
    assert probes["grammar"]["outcome"] == "skipped"
    assert probes["json_object"]["outcome"] == "honoured"


def test_a_good_server_names_model_formats_window_and_usage_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = {"data": [{"id": "other"}, {"id": "m", "meta": {"n_ctx_train": 8192}}]}
    with serving(FakeServer(listing=listing, cached=True)) as fake:
        code, document, _ = _check(capsys, _config(tmp_path, fake.base_url))
        posts = list(fake.posts)
    assert code == 0
    endpoint = document["endpoints"][0]
    assert endpoint["models"]["ids"] == ["other", "m"] and endpoint["models"]["listed"] is True
    assert endpoint["context_window"] == {"tokens": 8192, "source": "models.meta.n_ctx_train"}
    assert endpoint["formats"] == ["json_schema"]  # where auto stops
    probe = endpoint["probes"]["json_schema"]
    assert probe["usage"]["cached_prompt_tokens"] == 8
    assert "usage.prompt_tokens_details.cached_tokens" in probe["usage_fields"]
    # One tiny request per format auto may use, and text, each bounded in
    # tokens, at temperature 0.
    assert [p.get("response_format", {}).get("type") for p in posts] == ["json_schema", None]
    assert [p["max_tokens"] for p in posts] == [PROBE_MAX_TOKENS, TEXT_PROBE_MAX_TOKENS]
    assert all(p["temperature"] == 0 for p in posts)
    assert posts[0]["response_format"]["json_schema"]["schema"]["required"] == ["ok"]


def test_the_text_report_says_what_it_spent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    props = {"default_generation_settings": {"n_ctx": 4096}}
    fake_server = FakeServer(schema="refuse_400", listing={"data": [{"id": "x"}]}, props=props)
    with serving(fake_server) as fake:
        code, out, _ = _check(capsys, _config(tmp_path, fake.base_url), as_json=False)
    assert code == 0
    assert "the configured model is NOT listed" in out
    assert "context window: 4096 tokens (props.default_generation_settings.n_ctx)" in out
    assert "json_schema: refused (HTTP 400)" in out
    assert "tokens spent: 34 (24 prompt + 10 completion) in 2 probe answer(s)" in out


@pytest.mark.parametrize(
    ("status", "code"), [(401, "llm_auth_failed"), (400, "llm_request_rejected")]
)
def test_a_refusing_server_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int, code: str
) -> None:
    with serving(FakeServer(status_for_all=status)) as fake:
        exit_code, _document, err = _check(capsys, _config(tmp_path, fake.base_url))
    assert exit_code == 3
    error = json.loads(err)
    assert error["error"] == code
    assert error["details"]["endpoint_index"] == 0
    with serving(FakeServer(status_for_all=status)) as fake:
        exit_code, out, err = _check(capsys, _config(tmp_path, fake.base_url), as_json=False)
    assert exit_code == 3 and json.loads(err)["error"] == code
    assert f"{code}: " in out and "Traceback" not in err


def test_every_endpoint_is_checked_and_the_first_failure_is_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(FakeServer()) as fake:
        code, document, err = _check(capsys, _config(tmp_path, fake.base_url, refused_url()))
    assert code == 3
    assert [e["reachable"] for e in document["endpoints"]] == [True, False]
    assert json.loads(err)["details"]["endpoint_index"] == 1


def test_a_bad_config_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "investigation.toml"
    path.write_text('[llm]\nbase_urls = ["ftp://x"]\nmodel = "m"\n')
    assert main(["llm", "check", "--config", str(path)]) == 2
    assert json.loads(capsys.readouterr().err)["error"] == "investigation_config_invalid"


@pytest.mark.integration
def test_the_real_server_names_its_model_and_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = real_llm_server()
    code, document, err = _check(capsys, _config(tmp_path, server.base_url, model=server.model))
    assert code == 0, err
    endpoint = document["endpoints"][0]
    assert endpoint["models"]["listed"] is True
    # llama-cpp-python 0.3.36 refuses json_schema with HTTP 500 and honours a grammar.
    assert endpoint["probes"]["json_schema"] == {
        "outcome": "refused",
        "status": 500,
        "latency_ms": endpoint["probes"]["json_schema"]["latency_ms"],
    }
    assert endpoint["formats"] == ["grammar"]
    assert endpoint["probes"]["text"]["outcome"] == "answered"
    assert 0 < document["tokens"]["total_tokens"] <= 200
