"""`kb serve` over real HTTP (uvicorn on a free port, httpx) and MCP, on the demo tenants."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import anyio
import httpx
import pytest

from kb_retrieval.retrieval.pack import dumps_pack, validate_pack
from tests.conftest import EVAL_AS_OF

ALPINE, KAYAK = "alpine-treks", "coastal-kayak"
REFUND_QUESTION = (
    "If I have to pull out of the trek three days before we leave, is any money returned?"
)
THREAD = {
    "subject": "Re: kit list",
    "messages": [
        {"role": "guest", "text": "Hello, we booked the trek for next spring."},
        {"role": "operator", "text": "Thanks, your booking is confirmed."},
        {"role": "guest", "text": "Do we need to bring our own sleeping bags or can we hire them?"},
    ],
}


@dataclass
class Served:
    url: str
    tokens: dict[str, str]
    token_ids: dict[str, str]

    def headers(self, tenant: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[tenant]}"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(db, minilm, real_pipeline, demo_index) -> Iterator[Served]:
    """The real app under uvicorn in a thread, with its own retriever (its own result cache)."""
    import uvicorn

    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever
    from kb_retrieval.service import KnowledgeBase
    from kb_retrieval.serving.app import create_app
    from kb_retrieval.serving.core import ServeSettings
    from kb_retrieval.serving.tokens import TokenStore

    retriever = Retriever(db, minilm, real_pipeline.versions, RetrievalConfig())
    app = create_app(KnowledgeBase(db, real_pipeline, retriever), ServeSettings(workers=2))
    store = TokenStore(db)
    issued = {t: store.create(t, "test_serve") for t in (ALPINE, KAYAK, "never-ingested")}
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield Served(
            f"http://127.0.0.1:{port}",
            {t: i.secret for t, i in issued.items()},
            {t: i.token_id for t, i in issued.items()},
        )
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def ask(served: Served, tenant: str, body: object, token_of: str | None = None) -> httpx.Response:
    """POST a JSON body (ASCII-escaped, so that a lone surrogate travels as JSON allows)."""
    headers = served.headers(token_of or tenant) if token_of != "" else {}
    headers["Content-Type"] = "application/json"
    content = json.dumps(body).encode()
    return httpx.post(
        f"{served.url}/v1/tenants/{tenant}/ask", content=content, headers=headers, timeout=60
    )


def error_of(response: httpx.Response) -> dict[str, object]:
    assert response.headers["content-type"].startswith("application/json"), response.text
    assert "Traceback" not in response.text
    return response.json()["error"]


def test_ask_over_http_is_the_in_process_pack_byte_for_byte(served, retriever):
    expected = retriever.retrieve(ALPINE, REFUND_QUESTION, as_of=date.fromisoformat(EVAL_AS_OF))
    response = ask(served, ALPINE, {"email": REFUND_QUESTION, "as_of": EVAL_AS_OF})
    assert response.status_code == 200, response.text
    validate_pack(response.json())
    assert response.text == dumps_pack(expected.pack)
    assert response.json()["evidence"], "the refund question finds cited evidence"


def test_ask_takes_a_thread_trip_context_and_sensitivity(served, retriever):
    body = {
        "email": THREAD,
        "as_of": EVAL_AS_OF,
        "trip_context": {"trip_date": "2027-04-02"},
        "sensitivity": ["refund"],
    }
    response = ask(served, ALPINE, body)
    assert response.status_code == 200, response.text
    pack = response.json()
    validate_pack(pack)
    expected = retriever.retrieve(
        ALPINE,
        THREAD,
        as_of=date.fromisoformat(EVAL_AS_OF),
        trip_context={"trip_date": "2027-04-02"},
        sensitivity=["refund"],
    )
    assert pack == expected.pack
    assert "refund" in pack["sensitivity"]


def test_no_token_is_401_and_another_tenants_token_is_403(served):
    body = {"email": REFUND_QUESTION}
    missing = ask(served, ALPINE, body, token_of="")
    assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    assert error_of(missing)["field"] == "authorization"
    wrong = httpx.post(
        f"{served.url}/v1/tenants/{ALPINE}/ask",
        json=body,
        headers={"Authorization": "Bearer kbt_not-a-real-token"},
    )
    assert wrong.status_code == 401
    cross = ask(served, KAYAK, body, token_of=ALPINE)
    assert cross.status_code == 403 and error_of(cross)["field"] == "tenant"
    docs = httpx.get(f"{served.url}/v1/tenants/{KAYAK}/documents", headers=served.headers(ALPINE))
    assert docs.status_code == 403
    # Auth comes before the body: a bad body without a token is still 401, not 422.
    assert ask(served, ALPINE, {"email": ""}, token_of="").status_code == 401


def test_a_revoked_token_is_refused_from_the_next_request(served, db):
    from kb_retrieval.serving.tokens import TokenStore

    store = TokenStore(db)
    issued = store.create(KAYAK, "to revoke")
    url = f"{served.url}/v1/tenants/{KAYAK}/documents"
    auth = {"Authorization": f"Bearer {issued.secret}"}
    assert httpx.get(url, headers=auth).status_code == 200
    assert store.revoke(issued.token_id) is True
    assert httpx.get(url, headers=auth).status_code == 401
    assert store.revoke(issued.token_id) is False


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"email": ""}, 422, "email"),
        ({"email": "   \n  "}, 422, "email"),
        ({"email": "caf\udce9 refund?"}, 422, "email"),
        ({"email": "refund?", "as_of": "2026-02-30"}, 422, "as_of"),
        (
            {"email": "refund?", "trip_context": {"trip_date": "next week"}},
            422,
            "trip_context.trip_date",
        ),
        ({"email": "refund?", "sensitivity": ["gossip"]}, 422, "sensitivity.0"),
        ({"email": "refund?", "tenant": "coastal-kayak"}, 422, "tenant"),
        ({"as_of": "2026-11-15"}, 422, "email"),
        ({"email": {"messages": [{"role": "operator", "text": "hi"}]}}, 422, "email"),
        (["refund?"], 422, "body"),
    ],
)
def test_bad_bodies_are_4xx_json_naming_the_field(served, body, status, field):
    response = ask(served, ALPINE, body)
    assert response.status_code == status, response.text
    error = error_of(response)
    assert str(error["field"]).startswith(field), error


def test_raw_bodies_too_large_not_utf8_or_not_json(served):
    url = f"{served.url}/v1/tenants/{ALPINE}/ask"
    headers = {**served.headers(ALPINE), "Content-Type": "application/json"}
    big = json.dumps({"email": "refund " * 11_000}).encode()
    assert len(big) > 64 * 1024
    too_large = httpx.post(url, content=big, headers=headers)
    assert too_large.status_code == 413 and error_of(too_large)["field"] == "body"

    def chunks() -> Iterator[bytes]:
        yield b'{"email": "'
        for _ in range(80):
            yield b"x" * 1024
        yield b'"}'

    streamed = httpx.post(url, content=chunks(), headers=headers)
    assert streamed.status_code == 413
    latin1 = httpx.post(url, content='{"email": "café refund"}'.encode("latin-1"), headers=headers)
    assert latin1.status_code == 400 and error_of(latin1)["field"] == "body"
    broken = httpx.post(url, content=b'{"email": ', headers=headers)
    assert broken.status_code == 400 and error_of(broken)["field"] == "body"


def test_a_tenant_that_was_never_ingested_is_404_naming_the_tenant(served):
    response = ask(served, "never-ingested", {"email": REFUND_QUESTION})
    assert response.status_code == 404
    assert error_of(response)["field"] == "tenant"
    docs = httpx.get(
        f"{served.url}/v1/tenants/never-ingested/documents",
        headers=served.headers("never-ingested"),
    )
    assert docs.status_code == 404


def test_documents_lists_versions_with_state_and_reason_code(served, demo_index):
    response = httpx.get(
        f"{served.url}/v1/tenants/{ALPINE}/documents", headers=served.headers(ALPINE)
    )
    assert response.status_code == 200
    listed = response.json()["documents"]
    assert {d["doc_version_id"] for d in listed} == set(demo_index[ALPINE])
    states = {d["state"] for d in listed}
    assert "indexed" in states
    troubled = [d for d in listed if d["state"] in ("failed", "needs_attention")]
    assert troubled and all(d["reason_code"] for d in troubled)
    assert all(d["chunks"] > 0 for d in listed if d["state"] == "indexed")
    superseding = [d for d in listed if d["supersedes"]]
    for doc in superseding:
        old = next(d for d in listed if d["doc_version_id"] == doc["supersedes"])
        assert doc["doc_version_id"] in old["superseded_by"]


def test_health_readiness_metrics_and_openapi(served):
    assert httpx.get(f"{served.url}/healthz").json() == {"status": "ok"}
    deadline = time.monotonic() + 60
    while (ready := httpx.get(f"{served.url}/readyz")).status_code != 200:
        assert time.monotonic() < deadline, ready.text
        time.sleep(0.2)
    assert ready.json()["database"] is True
    ask(served, ALPINE, {"email": "Is lunch included on the first day?", "as_of": EVAL_AS_OF})
    text = httpx.get(f"{served.url}/metrics").text
    assert (
        'kb_http_requests_total{method="POST",route="/v1/tenants/{tenant}/ask",status="200"}'
        in text
    )
    assert 'kb_http_request_seconds_bucket{le="0.1",route="/v1/tenants/{tenant}/ask"}' in text
    assert "kb_snapshot_cache_hits_total" in text and "kb_snapshot_reloads_total" in text
    assert ALPINE not in text, "tenant ids stay out of metric labels"
    spec = httpx.get(f"{served.url}/openapi.json").json()
    assert {"/v1/tenants/{tenant}/ask", "/v1/tenants/{tenant}/documents"} <= set(spec["paths"])
    pack_schema = spec["paths"]["/v1/tenants/{tenant}/ask"]["post"]["responses"]["200"]
    assert "evidence" in pack_schema["content"]["application/json"]["schema"]["properties"]
    missing = httpx.get(f"{served.url}/v2/anything")
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"


def test_mcp_over_streamable_http_lists_and_calls_both_tools(served, retriever):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    expected = retriever.retrieve(ALPINE, REFUND_QUESTION, as_of=date.fromisoformat(EVAL_AS_OF))

    async def session(token: str) -> dict[str, object]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with (
            http,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client,
        ):
            tools = await client.list_tools()
            asked = await client.call_tool(
                "ask", {"tenant": ALPINE, "email": REFUND_QUESTION, "as_of": EVAL_AS_OF}
            )
            docs = await client.call_tool("documents", {"tenant": ALPINE})
            cross = await client.call_tool("documents", {"tenant": KAYAK})
            empty = await client.call_tool("ask", {"tenant": ALPINE, "email": " "})
            return {"tools": tools, "ask": asked, "docs": docs, "cross": cross, "empty": empty}

    out = anyio.run(session, served.tokens[ALPINE])
    assert {tool.name for tool in out["tools"].tools} == {"ask", "documents"}
    asked = out["ask"]
    assert not asked.is_error
    validate_pack(asked.structured_content)
    assert asked.structured_content == expected.pack
    docs = out["docs"].structured_content
    assert docs["tenant_id"] == ALPINE and docs["documents"]
    assert out["cross"].is_error and "forbidden" in out["cross"].content[0].text
    assert out["empty"].is_error and "email" in out["empty"].content[0].text


def test_mcp_over_http_without_a_token_is_401(served):
    response = httpx.post(
        f"{served.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401 and error_of(response)["field"] == "authorization"
