"""`kb serve`: retrieval as an HTTP service and MCP tools (FastAPI, uvicorn, the `mcp` SDK).

app.py         the FastAPI app: /v1/tenants/{tenant}/ask and /documents, health, metrics, /mcp
core.py        shared by HTTP and MCP: knowledge base opened once, bounded pool, auth, timeouts
mcp_tools.py   the `ask` and `documents` MCP tools (stdio and streamable HTTP)
tokens.py      bearer tokens bound to one tenant, stored hashed (migration 0007)
documents.py   document versions with state and reason code
models.py      request bodies; errors.py JSON errors naming the field; middleware.py; metrics.py
"""
