"""JSON errors that name the field at fault; no traceback ever reaches a client."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

LOG = logging.getLogger("kb_retrieval.serving")
STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    503: "overloaded",
    504: "timeout",
}


class ApiError(Exception):
    """An answer other than 200: status, stable code, the field at fault, a message."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "field": self.field, "message": self.message}}

    def response(self) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if self.status == 401 else None
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def validation_error(error: RequestValidationError) -> ApiError:
    """The first problem of a request body, its location written as a field path."""
    first = error.errors()[0]
    loc = [str(part) for part in first.get("loc", ()) if part not in ("body",)]
    if first.get("type") == "json_invalid":
        return ApiError(400, "invalid_json", "the body is not valid UTF-8 JSON", "body")
    field = ".".join(part for part in loc if not part.startswith(("function-", "tagged-")))
    message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    if first.get("type") == "missing":
        message = "this field is required"
    if not field and first.get("type") in ("model_attributes_type", "dict_type", "model_type"):
        message = "must be a JSON object (Content-Type: application/json)"
    return ApiError(422, "invalid_request", f"{field or 'body'}: {message}", field or "body")


def install_error_handlers(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return exc.response()

    async def invalid(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return validation_error(exc).response()

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        code = STATUS_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 400 and "parsing the body" in message:
            return ApiError(
                400, "invalid_json", "the body is not valid UTF-8 JSON", "body"
            ).response()
        return ApiError(exc.status_code, code, message).response()

    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        LOG.error("unexpected error", exc_info=exc)
        return ApiError(500, "internal_error", "internal error (logged by the server)").response()

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
