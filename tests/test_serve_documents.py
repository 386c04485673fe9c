"""Documents over HTTP as a team's service would use them (issue 38): a real `driftgraph serve` process, a real
Neo4j, the fake model. Upload a PDF (multipart), a DOCX and an HTML page (JSON), follow the jobs, ask a question
whose cited source names the PDF page, replace the DOCX, delete the PDF, and check the scopes: a read key gets
403 on upload, a server without keys is read-only, and an interrupted job resumes when the server starts again."""

from __future__ import annotations

import base64
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.support.documents import html_page, pdf_bytes, write_docx
from tests.support.serve import Server, serve_env, write_config

pytest.importorskip("pypdf")
pytest.importorskip("docx")
pytest.importorskip("trafilatura")
from tests.test_index_documents_e2e import INDEX, PAGE_1, PAGE_2, answer_responder  # noqa: E402

pytestmark = pytest.mark.e2e
WRITER, READER, ELSEWHERE = "writer-key-5c1e", "reader-key-77aa", "elsewhere-key-0b3d"
QUESTION = "What does the Brightwater turbine feed in Ellis?"


def _server(tmp: Path, neo4j: dict, fake: Any, keys: bool = True, *args: str) -> Server:
    cwd = tmp / ("keyed" if keys else "open")
    write_config(
        cwd,
        {"metrics": False},
        llm={"base_url": fake.base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={**INDEX, "cache_dir": str(tmp / "cache")},
    )
    env = serve_env(neo4j, fake)
    if keys:
        keys_text = f"# test keys\n{WRITER} read,write\n{READER} read\n{ELSEWHERE} read,write another-db\n"
        (tmp / "keys").write_text(keys_text, encoding="utf-8")
        env["DRIFTGRAPH_API_KEYS_FILE"] = str(tmp / "keys")
    return Server(cwd, env, *args).wait_ready()


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _wait(url: str, job: dict[str, Any], timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = httpx.get(f"{url}/v1/jobs/{job['id']}", headers=_auth(READER), timeout=30).json()
        if got["state"] in ("done", "failed", "cancelled"):
            return got
        time.sleep(0.3)
    raise AssertionError(f"job {job['id']} did not finish: {got}")


def _docx(path: Path, sentence: str) -> bytes:
    write_docx(path, [(1, "Operations"), (0, sentence)])
    return path.read_bytes()


def test_upload_ask_replace_delete_over_http_with_scoped_keys(store, neo4j_config, fake_llm, tmp_path):
    fake_llm.responder = answer_responder
    srv = _server(tmp_path, neo4j_config, fake_llm)
    try:
        url = srv.url
        pdf = pdf_bytes([PAGE_1, PAGE_2])
        # scopes: no key 401, a read key 403, before anything is stored
        files = {"file": ("report.pdf", pdf, "application/pdf")}
        assert httpx.post(f"{url}/v1/documents", files=files, timeout=30).status_code == 401
        denied = httpx.post(f"{url}/v1/documents", files=files, headers=_auth(READER), timeout=30)
        assert denied.status_code == 403 and "write" in denied.json()["error"]["message"]

        accepted = httpx.post(f"{url}/v1/documents", files=files, data={"metadata": '{"team": "ops"}'},
                              headers=_auth(WRITER), timeout=30)  # fmt: skip
        assert accepted.status_code == 202, accepted.text
        assert accepted.headers["location"] == f"/v1/jobs/{accepted.json()['id']}"
        pdf_job = _wait(url, accepted.json())
        assert pdf_job["state"] == "done", pdf_job
        assert pdf_job["result"]["index"]["documents"]["added"] == 1
        stages = pdf_job["progress"]  # what GET /v1/jobs/{id} showed as the change moved, at its end
        chunks = pdf_job["result"]["index"]["chunks"]
        assert stages["extract"] == {"done": chunks, "total": chunks} and chunks > 1
        assert {"load", "chunk", "write", "communities", "reports"} <= set(stages) and pdf_job["stage"] is None
        pdf_id = pdf_job["result"]["documents"][0]

        docx = _docx(tmp_path / "handbook.docx", "Marta Quill schedules the Ellis crane shifts each week.")
        page = html_page(
            [(1, "Port guide"), (0, "Visiting ships report to the Ellis harbor master on channel twelve.")]
        )
        jobs = [
            httpx.post(f"{url}/v1/documents", headers=_auth(WRITER), timeout=30, json={
                "name": name, "content_base64": base64.b64encode(data).decode(), "id": doc_id})
            for name, data, doc_id in (("handbook.docx", docx, "handbook"), ("port.html", page.encode(), None))
        ]  # fmt: skip
        assert [j.status_code for j in jobs] == [202, 202]
        done = [_wait(url, j.json()) for j in jobs]
        assert [d["state"] for d in done] == ["done", "done"], done
        listed = httpx.get(f"{url}/v1/documents", headers=_auth(READER), timeout=30).json()["documents"]
        assert {d["title"] for d in listed} == {"report.pdf", "handbook.docx", "port.html"}
        pdf_meta = next(d for d in listed if d["id"] == pdf_id)["metadata"]
        assert pdf_meta == {"path": "report.pdf", "pages": 2, "team": "ops"}

        # a question whose cited source names the PDF page
        answer = httpx.post(f"{url}/v1/query/local", json={"question": QUESTION}, headers=_auth(READER), timeout=120)
        assert answer.status_code == 200, answer.text
        cited = answer.json()["trace"]["citations"]["cited_sources"]
        assert len(cited) == 1 and cited[0]["location"] == "page 2"

        # replace the DOCX: same id, the new text in, the old out
        new = _docx(tmp_path / "handbook2.docx", "Pilot Boat Heron carries the Quill divers after a storm.")
        put = httpx.put(f"{url}/v1/documents/handbook", headers=_auth(WRITER), timeout=30,
                        json={"name": "handbook.docx", "content_base64": base64.b64encode(new).decode()})  # fmt: skip
        assert put.status_code == 202, put.text
        replaced = _wait(url, put.json())
        assert replaced["state"] == "done" and replaced["result"]["index"]["documents"]["replaced"] == 1
        text = httpx.get(f"{url}/v1/documents/handbook", headers=_auth(READER), timeout=30).json()["text"]
        assert "Pilot Boat Heron" in text and "crane shifts" not in text
        ask = {"question": "Who carries the divers after a storm?", "context_only": True}
        context = json.dumps(httpx.post(f"{url}/v1/query/basic", headers=_auth(READER), timeout=120, json=ask).json())
        assert "Pilot Boat Heron" in context and "crane shifts" not in context

        # delete the PDF: every node it alone contributed goes, the other documents' communities stay
        only_pdf = store.read("tests/document_only_entities", id=pdf_id)[0]["ids"]
        assert only_pdf
        gone = httpx.delete(f"{url}/v1/documents/{pdf_id}", headers=_auth(WRITER), timeout=30)
        assert gone.status_code == 202
        deleted = _wait(url, gone.json())
        redone = deleted["result"]["index"]["redone"]
        assert deleted["state"] == "done" and redone["deleted"]["documents"] == 1
        assert redone["communities"]["kept"] > 0, "the other documents' communities are kept"
        left = store.read("tests/entities_by_id", ids=only_pdf)[0]["found"]
        model = store.read("tests/index_model")[0]
        assert left == 0 and model["documents"] == 2 and model["orphan_chunks"] == 0 and model["unmentioned"] == 0

        # a key bound to another database sees nothing of this one, and changes nothing
        for method, path in (("GET", "/v1/documents"), ("GET", f"/v1/jobs/{deleted['id']}"), ("POST", "/v1/documents")):
            other = httpx.request(method, f"{url}{path}", headers=_auth(ELSEWHERE), json={"text": "x"}, timeout=30)
            assert other.status_code == 403 and "another-db" in other.json()["error"]["message"], other.text
        asked = httpx.post(f"{url}/v1/query/basic", json={"question": QUESTION}, headers=_auth(ELSEWHERE), timeout=30)
        assert asked.status_code == 403

        # unknown ids and a finished job
        assert httpx.delete(f"{url}/v1/documents/{pdf_id}", headers=_auth(WRITER), timeout=30).status_code == 404
        assert httpx.get(f"{url}/v1/jobs/nope", headers=_auth(READER), timeout=30).status_code == 404
        again = httpx.delete(f"{url}/v1/jobs/{deleted['id']}", headers=_auth(WRITER), timeout=30)
        assert again.status_code == 409
    finally:
        assert srv.stop() is not None

    # a job the server was running when it died (state "running", its input on disk) runs again at the next start
    jobs_dir = tmp_path / "keyed" / ".driftgraph" / "jobs"
    job_id = uuid.uuid4().hex
    (jobs_dir / job_id).mkdir(parents=True)
    (jobs_dir / job_id / "input.txt").write_text("Captain Ruth Amadi runs the Kelmouth Ferry.", encoding="utf-8")
    (jobs_dir / job_id / "job.json").write_text(json.dumps({
        "id": job_id, "action": "add", "state": "running", "created_at": "2026-01-01T00:00:00+00:00",
        "title": "ferry", "runs": 1}), encoding="utf-8")  # fmt: skip
    srv = _server(tmp_path, neo4j_config, fake_llm)
    try:
        resumed = _wait(srv.url, {"id": job_id})
        assert resumed["state"] == "done" and resumed["runs"] == 2, resumed
        titles = {d["title"] for d in httpx.get(f"{srv.url}/v1/documents", headers=_auth(READER)).json()["documents"]}
        assert titles == {"handbook.docx", "port.html", "ferry"}
    finally:
        srv.stop()

    # without any key: loopback only and read-only
    srv = _server(tmp_path, neo4j_config, fake_llm, keys=False)
    try:
        refused = httpx.post(f"{srv.url}/v1/documents", json={"text": "Anything at all."}, timeout=30)
        assert refused.status_code == 403 and "read-only" in refused.json()["error"]["message"]
        assert len(httpx.get(f"{srv.url}/v1/documents", timeout=30).json()["documents"]) == 3
    finally:
        srv.stop()


async def _mcp_session(url: str, key: str) -> dict[str, Any]:
    """As an agent would: list the tools, try to add with ``key``, follow the job, list, delete."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def structured(result: Any) -> Any:
        assert not result.is_error, result.content
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data

    async def follow(client: Any, job: dict[str, Any]) -> dict[str, Any]:
        import anyio

        for _ in range(600):
            got = structured(await client.call_tool("get_job", {"job_id": job["id"]}))
            if got["state"] in ("done", "failed", "cancelled"):
                return dict(got)
            await anyio.sleep(0.3)
        raise AssertionError(f"job {job['id']} did not finish")

    out: dict[str, Any] = {}
    http = httpx.AsyncClient(headers=_auth(key), timeout=180)
    transport = streamable_http_client(f"{url}/mcp", http_client=http)
    async with http, Client(transport, read_timeout_seconds=180) as client:
        out["tools"] = {t.name for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_document", {"text": "Captain Ruth Amadi runs the Kelmouth Ferry."})
        out["added_error"] = added.content[0].text if added.is_error else None
        if added.is_error:
            return out
        out["added"] = await follow(client, structured(added))
        out["listed"] = structured(await client.call_tool("list_documents", {}))["documents"]
        doc_id = out["added"]["result"]["documents"][0]
        out["deleted"] = await follow(
            client, structured(await client.call_tool("delete_document", {"document_id": doc_id}))
        )
        out["after"] = structured(await client.call_tool("list_documents", {}))["documents"]
    return out


def test_mcp_document_tools_follow_the_key_scopes(store, neo4j_config, fake_llm, tmp_path):
    import anyio

    fake_llm.responder = answer_responder
    srv = _server(tmp_path, neo4j_config, fake_llm, True, "--mcp")
    try:
        reader = anyio.run(_mcp_session, srv.url, READER)
        assert {"add_document", "delete_document", "get_job", "list_documents"} <= reader["tools"]
        assert reader["added_error"] and "write scope" in reader["added_error"]
        writer = anyio.run(_mcp_session, srv.url, WRITER)
        assert writer["added_error"] is None and writer["added"]["state"] == "done", writer
        assert [d["title"] for d in writer["listed"]].count(
            "text " + writer["added"]["result"]["documents"][0][:12]
        ) == 1
        assert writer["deleted"]["state"] == "done" and writer["after"] == []
    finally:
        srv.stop()
