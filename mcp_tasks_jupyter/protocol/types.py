"""MCP wire models this client reads, validated at the boundary with pydantic. No I/O.

Field names follow the wire (camelCase) through aliases; unknown fields are kept (``extra="allow"``)
so nothing a server sends is silently lost. ``parse(Model, data, what)`` turns a validation failure
into a ``ValueError`` whose text says what was wrong.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from .apps import ToolUI, tool_ui
from .bounds import clip

#: How much of a validation failure an error message quotes (the field paths may hold a server's keys).
MAX_PROBLEMS_CHARS = 500


class WireModel(BaseModel):
    # No NaN or infinities, not even spelt as strings ("inf"): they are not JSON, and nothing here
    # can compute with them.
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=False, allow_inf_nan=False)


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any, what: str) -> M:
    """Validate ``data`` as ``model``; raise ValueError naming ``what`` and the first problems."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise ValueError(f"invalid {what}: {clip(problems, MAX_PROBLEMS_CHARS)}") from None


# --- initialize -------------------------------------------------------------------------------


class Implementation(WireModel):
    name: str
    version: str = ""
    title: str | None = None


class InitializeResult(WireModel):
    protocol_version: str = Field(alias="protocolVersion")
    capabilities: dict[str, Any] = Field(default_factory=dict)
    server_info: Implementation = Field(alias="serverInfo")
    instructions: str | None = None


class DiscoverResult(WireModel):
    """``server/discover`` (2026-07-28): the server's versions, capabilities and instructions.

    The server's identity is in ``_meta["io.modelcontextprotocol/serverInfo"]`` (see protocol/modern.py).
    """

    supported_versions: list[str] = Field(alias="supportedVersions")
    capabilities: dict[str, Any] = Field(default_factory=dict)
    instructions: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


# --- content blocks ---------------------------------------------------------------------------


class Annotated(WireModel):
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextContent(Annotated):
    type: Literal["text"] = "text"
    text: str


class ImageContent(Annotated):
    type: Literal["image"] = "image"
    data: str
    mime_type: str = Field(alias="mimeType")


class AudioContent(Annotated):
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str = Field(alias="mimeType")


class ResourceContents(WireModel):
    uri: str
    mime_type: str | None = Field(default=None, alias="mimeType")
    text: str | None = None
    blob: str | None = None


class EmbeddedResource(Annotated):
    type: Literal["resource"] = "resource"
    resource: ResourceContents


class ResourceLink(Annotated):
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, alias="mimeType")
    size: int | None = None


class UnknownContent(WireModel):
    """A content block of a type this client does not know; kept as sent."""

    type: str


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink | UnknownContent

_CONTENT_TYPES: dict[str, type[WireModel]] = {
    "text": TextContent,
    "image": ImageContent,
    "audio": AudioContent,
    "resource": EmbeddedResource,
    "resource_link": ResourceLink,
}


def parse_content(blocks: Any) -> list[ContentBlock]:
    """Validate a ``content`` array; unknown block types are kept as UnknownContent."""
    if not isinstance(blocks, list):
        raise ValueError("invalid tool result: 'content' must be an array")
    out: list[ContentBlock] = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ValueError(f"invalid tool result: content[{i}] must be an object with a 'type'")
        model = _CONTENT_TYPES.get(block["type"], UnknownContent)
        out.append(parse(model, block, f"content[{i}] ({block['type']})"))  # type: ignore[arg-type]
    return out


# --- tools ------------------------------------------------------------------------------------

TaskSupport = Literal["forbidden", "optional", "required"]


class Tool(WireModel):
    """A tool the server offers. ``input_schema`` is kept exactly as sent."""

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = Field(alias="inputSchema", default_factory=dict)
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")
    annotations: dict[str, Any] | None = None
    execution: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    # Set by the dialect (never by the wire): this server's tool list declares no task support.
    _decided_per_call: bool = PrivateAttr(default=False)

    @property
    def task_support(self) -> TaskSupport | None:
        """``forbidden`` / ``optional`` / ``required`` from ``execution.taskSupport`` (absent = forbidden);
        None when the server decides per call (a dialect whose ``tools/list`` carries no task support,
        e.g. ``ext``, and the tool declares none)."""
        value = (self.execution or {}).get("taskSupport")
        if value in ("optional", "required"):
            return value  # type: ignore[no-any-return]
        if value is None and self._decided_per_call:
            return None
        return "forbidden"

    def decided_per_call(self) -> None:
        """Mark the tool as listed by a server that decides per call whether a call becomes a task."""
        self._decided_per_call = True

    @property
    def ui(self) -> ToolUI | None:
        """MCP Apps: the tool's view (``_meta.ui.resourceUri``) and visibility; None when it says nothing."""
        return tool_ui(self.meta)

    @property
    def required_arguments(self) -> list[str]:
        req = self.input_schema.get("required", [])
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


class ListToolsResult(WireModel):
    tools: list[Tool]
    next_cursor: str | None = Field(default=None, alias="nextCursor")


# --- notifications and server requests --------------------------------------------------------


class ProgressParams(WireModel):
    progress_token: str | int = Field(alias="progressToken")
    progress: float
    total: float | None = None
    message: str | None = None


class ElicitRequestParams(WireModel):
    message: str
    mode: str | None = None
    requested_schema: dict[str, Any] | None = Field(default=None, alias="requestedSchema")
    url: str | None = None
    elicitation_id: str | None = Field(default=None, alias="elicitationId")


class CreateMessageRequestParams(WireModel):
    messages: list[dict[str, Any]]
    max_tokens: int = Field(alias="maxTokens")
    system_prompt: str | None = Field(default=None, alias="systemPrompt")
    model_preferences: dict[str, Any] | None = Field(default=None, alias="modelPreferences")
