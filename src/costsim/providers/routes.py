"""Where a request went, from its URL: the platform, the model in the path, streaming or not.

Amazon Bedrock and Google Vertex AI serve Anthropic models with the Messages body, but name the
model in the path and say "stream" with the endpoint instead of a body field:

- Bedrock: ``POST /model/{model id}/invoke`` and ``/invoke-with-response-stream``
  (AWS event-stream body), also ``/converse`` and ``/converse-stream``;
- Vertex AI: ``POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict``
  and ``:streamRawPredict`` (SSE body).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from costsim.model import Platform

__all__ = ["Route", "route_of"]


@dataclass(frozen=True, slots=True)
class Route:
    platform: Platform | None
    model: str = ""
    stream: bool = False
    action: str = ""
    """The platform's verb: ``invoke``, ``converse``, ``rawPredict`` (empty for direct APIs)."""


_BEDROCK = re.compile(
    r"/model/(?P<model>[^/]+(?:/[^/]+)*?)/(?P<action>invoke|invoke-with-response-stream|"
    r"converse|converse-stream)/?$"
)
_VERTEX = re.compile(
    r"/publishers/(?P<publisher>[^/]+)/models/(?P<model>[^/:]+):(?P<action>rawPredict|"
    r"streamRawPredict|generateContent|streamGenerateContent|predict)/?$"
)
_DIRECT = Route(platform=None)


def route_of(url_path: str) -> Route:
    """The platform route of a URL path (a direct API call when it is neither)."""
    bedrock = _BEDROCK.search(url_path)
    if bedrock is not None:
        action = bedrock.group("action")
        model = unquote(bedrock.group("model"))
        return Route(
            Platform.BEDROCK,
            model=model.rsplit("/", 1)[-1],  # an inference-profile ARN ends with the model id
            stream=action.endswith("stream"),
            action=action.removesuffix("-with-response-stream").removesuffix("-stream"),
        )
    vertex = _VERTEX.search(url_path)
    if vertex is not None:
        action = vertex.group("action")
        return Route(
            Platform.VERTEX,
            model=unquote(vertex.group("model")),
            stream=action.startswith("stream"),
            action=action[6].lower() + action[7:] if action.startswith("stream") else action,
        )
    return _DIRECT
