"""`kb eval-drafts --drafter`: drafts written here (extractive, or an OpenAI-compatible LLM) and graded."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from tests.conftest import EVAL_AS_OF, GOLDEN


class FakeChatCompletions(BaseHTTPRequestHandler):
    """A local chat-completions endpoint: answers with the first evidence line, cited [1]."""

    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeChatCompletions.requests.append({"path": self.path, "body": body})
        prompt = body["messages"][-1]["content"]
        first = re.search(r"^\[1\] [^:]*: (.+?[.!?])", prompt, re.MULTILINE)
        content = f"{first.group(1)} [1]" if first else "Thank you for your message."
        answer = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def llm_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeChatCompletions.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_llm_drafter_writes_cited_drafts_that_are_graded(
    kb_cli, llm_endpoint, monkeypatch, tmp_path
):
    monkeypatch.setenv("KB_LLM_BASE_URL", llm_endpoint)
    monkeypatch.setenv("KB_LLM_MODEL", "local-test-model")
    golden = tmp_path / "three.jsonl"
    golden.write_text("".join(GOLDEN.read_text(encoding="utf-8").splitlines(True)[:3]))
    drafts = tmp_path / "drafts.jsonl"
    result = kb_cli(
        "eval-drafts",
        "--drafter",
        "llm",
        "--golden",
        str(golden),
        "--as-of",
        EVAL_AS_OF,
        "--write-drafts",
        str(drafts),
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["drafts_from"] == "drafter:llm"
    assert set(report["metrics"]) == {
        "policy_citation_coverage",
        "unsupported_claim_rate",
        "invented_policy_incidents",
    }
    assert FakeChatCompletions.requests, "the LLM endpoint was never called"
    assert all(r["path"] == "/v1/chat/completions" for r in FakeChatCompletions.requests)
    assert {r["body"]["model"] for r in FakeChatCompletions.requests} == {"local-test-model"}
    written = [json.loads(line) for line in drafts.read_text().splitlines()]
    assert len(written) == 3
    cited = [d for d in written if d["citations"]]
    assert len(cited) == len(FakeChatCompletions.requests)


def test_drafter_usage_errors_exit_2(kb_cli, monkeypatch, tmp_path):
    monkeypatch.delenv("KB_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("KB_LLM_MODEL", raising=False)
    assert kb_cli("eval-drafts", "--drafter", "llm").exit_code == 2
    assert kb_cli("eval-drafts", "--drafter", "poet").exit_code == 2
    assert kb_cli("eval-drafts").exit_code == 2
    drafts = tmp_path / "d.jsonl"
    drafts.write_text("")
    assert kb_cli("eval-drafts", str(drafts), "--drafter", "extractive").exit_code == 2
