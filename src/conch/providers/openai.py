"""OpenAI-compatible chat completions over HTTP: OpenAI, Azure OpenAI, and local servers.

Local servers (llama.cpp, Ollama, vLLM, LM Studio) speak the same protocol but differ in small
ways: some need no key, some ignore ``stream`` and answer with one JSON body, some honour a GBNF
``grammar`` field. The provider tolerates all of these.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from conch.config.credentials import lookup_secret, redact
from conch.errors import ConfigError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from conch.providers.streaming import DONE, MalformedStream, chunk_events, sse_data, usage_of

if TYPE_CHECKING:
    from conch.config.settings import AISettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
FALLBACK_MODEL = "default"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_CAP = 8.0
# A server asking for a longer pause than this is treated as down rather than waited on.
RETRY_AFTER_CAP = 60.0

T = TypeVar("T")


def missing_key(settings: AISettings) -> str | None:
    """The variable naming the API key ``settings`` need and no one has given (environment,
    keyring, this process); None when the provider needs none (local servers may go
    without) or has one."""
    if settings.provider == "azure":
        variable = settings.azure_api_key_env
    elif settings.provider == "openai" and _is_openai(settings.base_url or DEFAULT_BASE_URL):
        variable = settings.api_key_env
    else:
        return None
    return None if lookup_secret(variable) else variable


class OpenAIProvider:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint, always streamed."""

    def __init__(
        self,
        base_url: str,
        model: str | None,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        extra_headers: dict[str, str] | None = None,
        name: str = "openai",
        *,
        api_key_env: str = "OPENAI_API_KEY",
        azure_api_version: str | None = None,
        backoff_base: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """``transport`` replaces the network (``httpx.MockTransport`` in tests)."""
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_retries = max_retries
        self.timeout = timeout
        self._api_key = api_key
        self._api_key_env = api_key_env
        self._azure_api_version = azure_api_version
        self._backoff_base = backoff_base
        self._sleep = sleep
        self._end_token_id: int | None = None
        self._end_token_known = False
        self._tokenizer = azure_api_version is None and not _is_openai(self.base_url)
        self._scores = True  # until the server shows it cannot score replies
        # OpenAI's and Azure's models call tools natively; the small models behind other
        # servers (llama.cpp, Ollama, vLLM) are asked for JSON steps instead (``ai.tool_calls``).
        self.native_tool_calls = azure_api_version is not None or _is_openai(self.base_url)
        headers = {"User-Agent": "conch", **(extra_headers or {})}
        if api_key and azure_api_version is not None:
            headers["api-key"] = api_key
        elif api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        try:
            self._client = httpx.Client(
                headers=headers,
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                transport=transport,
            )
        except OSError as exc:  # the TLS setup reads the certificates SSL_CERT_FILE names
            raise ProviderError(
                f"cannot set up TLS for the model server at {self.base_url}: the certificates "
                f"could not be read ({exc.strerror or exc}); check SSL_CERT_FILE and SSL_CERT_DIR"
            ) from None

    @classmethod
    def from_settings(cls, settings: AISettings) -> OpenAIProvider:
        """Build from ``ai.*`` settings; the key comes from the environment or the keyring."""
        base_url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        env = settings.api_key_env
        key = lookup_secret(env)
        official = _is_openai(base_url)
        if official and not key:
            raise ProviderError(
                f"no API key for {base_url}: set {env} (export {env}=sk-...) or store it in the "
                f"system keyring (service 'conch', user '{env}')"
            )
        model = settings.model or (DEFAULT_OPENAI_MODEL if official else None)
        return cls(base_url, model, key, settings.timeout, settings.max_retries, api_key_env=env)

    @classmethod
    def azure_from_settings(cls, settings: AISettings) -> OpenAIProvider:
        """Build an Azure OpenAI provider from ``ai.azure_*`` settings."""
        if not settings.azure_endpoint:
            raise ConfigError("Azure OpenAI needs ai.azure_endpoint (or AZURE_OPENAI_ENDPOINT)")
        if not settings.azure_deployment:
            raise ConfigError("Azure OpenAI needs ai.azure_deployment (or AZURE_OPENAI_DEPLOYMENT)")
        env = settings.azure_api_key_env
        key = lookup_secret(env)
        if not key:
            raise ProviderError(
                f"Azure OpenAI needs an API key: set {env} or store it in the system keyring "
                f"(service 'conch', user '{env}')"
            )
        endpoint = settings.azure_endpoint.rstrip("/")
        base_url = f"{endpoint}/openai/deployments/{quote(settings.azure_deployment, safe='')}"
        return cls(
            base_url,
            settings.azure_deployment,
            key,
            settings.timeout,
            settings.max_retries,
            name="azure",
            api_key_env=env,
            azure_api_version=settings.azure_api_version,
        )

    # -- the protocol ------------------------------------------------------------------------

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        """Stream one chat completion: text deltas, whole tool calls, then usage."""
        body = self._body(messages, options, tools)
        response = self._send(body)
        try:
            ctype = response.headers.get("content-type", "")
            if "text/event-stream" in ctype:
                lines = self._lines(response)
            else:
                # Servers that ignore ``stream`` answer with one JSON body (or SSE mislabelled).
                text = self._guard(lambda: response.read().decode("utf-8", "replace"))
                if text.lstrip().startswith("{"):
                    yield from self._whole_reply(text)
                    return
                lines = iter(text.splitlines())
            ended: list[bool] = []
            calls = False
            try:
                for event in chunk_events(self._chunks(_marking_done(lines, ended))):
                    calls = calls or isinstance(event, ToolCall)
                    cut = isinstance(event, Finished) and event.finish_reason is None
                    if cut and not ended and not calls:
                        # No finish reason and no ``[DONE]``: the connection closed mid-reply,
                        # and the text that came is only part of it (a cut-off command is not
                        # one). Whole tool calls are kept: their arguments are checked anyway.
                        raise self._error(
                            f"the reply from the model server at {self._where} was cut off "
                            "before it ended (the connection closed mid-stream); try again"
                        )
                    yield event
            except MalformedStream as exc:
                raise self._malformed(str(exc)) from exc
        finally:
            response.close()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """How likely the model finds ``reply`` after ``messages`` (llama.cpp servers only;
        see ``conch.providers.llama_server``); None elsewhere."""
        if not self._scores or self._is_azure or _is_openai(self.base_url):
            return None
        from conch.providers.llama_server import Unsupported, reply_logprob

        try:
            return reply_logprob(
                self._client,
                self.base_url.removesuffix("/v1"),
                messages,
                reply,
                f"the model server at {self._where}",
            )
        except Unsupported:
            self._scores = False
            return None

    # -- request -----------------------------------------------------------------------------

    @property
    def _is_azure(self) -> bool:
        return self._azure_api_version is not None

    def _body(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": [m.to_openai() for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
        }
        if not self._is_azure:
            # Azure routes by deployment, so only other servers need a model name.
            body["model"] = self._resolve_model()
        if options.stop:
            body["stop"] = list(options.stop)
        if options.seed is not None:
            body["seed"] = options.seed
        if options.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 1  # the fewest that still reports each token's own
        if tools:
            body["tools"] = [tool.to_openai() for tool in tools]
        if options.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": options.json_schema, "strict": True},
            }
        if options.grammar and not self._is_azure and not _is_openai(self.base_url):
            # llama.cpp servers honour GBNF; OpenAI and Azure reject unknown fields.
            body["grammar"] = options.grammar
        end = self.end_token() if options.end_bias else None
        if end is not None:
            body["logit_bias"] = {str(end): options.end_bias}
        return body

    def end_token(self) -> int | None:
        """The id of the model's end-of-reply token, as a llama.cpp server names it (its
        ``/props`` and ``/tokenize``), or None where the server does not say (OpenAI, Azure,
        Ollama, vLLM): a logit bias needs a token id, which only the server's tokenizer knows."""
        if self._end_token_known:
            return self._end_token_id
        resolved: int | None = None
        if not self._is_azure and not _is_openai(self.base_url):
            root = self.base_url.removesuffix("/v1")
            try:
                props = self._client.get(f"{root}/props")
                props.raise_for_status()
                name = props.json()["eos_token"]
                tokens = self._client.post(
                    f"{root}/tokenize", json={"content": name, "parse_special": True}
                )
                tokens.raise_for_status()
                ids = tokens.json()["tokens"]
                if isinstance(name, str) and len(ids) == 1 and isinstance(ids[0], int):
                    resolved = ids[0]
            except httpx.TransportError:
                return None  # not cached: the server may come up; the request reports it
            except (httpx.HTTPError, ValueError, LookupError, TypeError):
                pass
        self._end_token_id, self._end_token_known = resolved, True
        return resolved

    def count_tokens(self, text: str) -> int | None:
        """The server's tokenizer on ``text`` where it has one (llama.cpp's ``/tokenize``);
        None elsewhere (OpenAI, Azure, Ollama, vLLM), and from then on once a server has said
        it has none."""
        if not self._tokenizer:
            return None
        from conch.providers.llama_server import token_count

        count = token_count(self._client, self.base_url.removesuffix("/v1"), text)
        if count is None:
            self._tokenizer = False
        return count

    def _resolve_model(self) -> str:
        if self.model is None:
            try:
                reply = self._client.get(f"{self.base_url}/models")
                reply.raise_for_status()
                self.model = str(reply.json()["data"][0]["id"])
            except httpx.TransportError:
                # Not cached: the server may come up; the chat request reports the failure.
                return FALLBACK_MODEL
            except (httpx.HTTPError, ValueError, LookupError, TypeError):
                self.model = FALLBACK_MODEL
        return self.model

    def _send(self, body: dict[str, Any]) -> httpx.Response:
        url = f"{self.base_url}/chat/completions"
        params = {"api-version": self._azure_api_version} if self._is_azure else None
        retries = 0
        while True:
            request = self._client.build_request("POST", url, json=body, params=params)
            try:
                response = self._client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if retries < self.max_retries:
                    self._sleep(self._delay(retries, None))
                    retries += 1
                    continue
                raise self._transport_error(exc, retries) from exc
            except httpx.HTTPError as exc:
                raise self._transport_error(exc) from exc
            if response.status_code < 400:
                return response
            try:
                detail = _excerpt(self._guard(response.read))
            finally:
                response.close()
            if response.status_code in RETRY_STATUSES and retries < self.max_retries:
                self._sleep(self._delay(retries, response.headers.get("retry-after")))
                retries += 1
                continue
            raise self._status_error(response.status_code, detail, retries)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), RETRY_AFTER_CAP)
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        return float(min(BACKOFF_CAP, self._backoff_base * 2**attempt))

    # -- reply -------------------------------------------------------------------------------

    def _lines(self, response: httpx.Response) -> Iterator[str]:
        lines = response.iter_lines()
        while (line := self._guard(lambda: next(lines, None))) is not None:
            yield line

    def _chunks(self, lines: Iterator[str]) -> Iterator[dict[str, Any]]:
        seen = False
        for data in sse_data(lines):
            seen = True
            yield self._parse(data)
        if not seen:
            raise self._malformed("(an empty reply)")

    def _whole_reply(self, text: str) -> Iterator[ProviderEvent]:
        event = self._parse(text)
        try:
            choice = (event.get("choices") or [{}])[0]
            message = choice.get("message") or {}
            calls = [
                ToolCall(
                    str(c.get("id") or f"call_{i}"),
                    str(c["function"]["name"]),
                    str(c["function"].get("arguments") or ""),
                )
                for i, c in enumerate(message.get("tool_calls") or [])
            ]
            usage = usage_of(event["usage"]) if event.get("usage") else Usage()
            finish = choice.get("finish_reason")
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            raise self._malformed(text) from exc
        if message.get("content"):
            yield TextDelta(str(message["content"]))
        yield from calls
        yield Finished(usage, str(finish) if finish else None)

    def _parse(self, text: str) -> dict[str, Any]:
        try:
            event = json.loads(text)
        except ValueError:
            raise self._malformed(text) from None
        if not isinstance(event, dict):
            raise self._malformed(text)
        if event.get("error"):
            # Servers report failures that happen mid-stream as an error event.
            detail = _excerpt(json.dumps(event).encode())
            raise self._error(f"the model server at {self._where} reported an error: {detail}")
        return event

    # -- errors ------------------------------------------------------------------------------

    @property
    def _where(self) -> str:
        if self._is_azure:
            return self.base_url.split("/openai/deployments/")[0]
        return self.base_url

    def _guard(self, read: Callable[[], T]) -> T:
        """Run ``read`` on the open response, turning transport failures into ProviderErrors."""
        try:
            return read()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc

    def _error(self, message: str) -> ProviderError:
        return ProviderError(redact(message, [self._api_key]))

    def _malformed(self, text: str) -> ProviderError:
        return self._error(
            f"malformed reply from the model server at {self._where}: {_excerpt(text.encode())}"
        )

    def _transport_error(self, exc: httpx.HTTPError, retries: int = 0) -> ProviderError:
        where, text = self._where, str(exc) or type(exc).__name__
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            reason = "connection refused" if "refused" in text.lower() else text
            reason += f", after {retries} retries" if retries else ""
            hint = (
                "ai.azure_endpoint or AZURE_OPENAI_ENDPOINT"
                if self._is_azure
                else "ai.base_url or OPENAI_BASE_URL"
            )
            return self._error(
                f"cannot reach the model server at {where} ({reason}); is it running? set {hint}"
            )
        if isinstance(exc, httpx.TimeoutException):
            return self._error(
                f"the model server at {where} did not answer within {self.timeout:g} s; "
                "raise ai.timeout or check the server"
            )
        return self._error(f"the connection to the model server at {where} failed ({text})")

    def _status_error(self, status: int, detail: str, retries: int) -> ProviderError:
        where, after = self._where, f" after {retries} retries" if retries else ""
        if status in (401, 403):
            check = "check" if self._api_key else "no key was sent; set"
            message = (
                f"the model server at {where} refused the credentials (HTTP {status}); "
                f"{check} {self._api_key_env}"
            )
        elif status == 404:
            target = (
                "ai.azure_deployment and ai.azure_endpoint"
                if self._is_azure
                else f"the model '{self.model}' and ai.base_url"
            )
            message = f"the model server at {where} answered HTTP 404 ({detail}); check {target}"
        elif status == 429:
            message = (
                f"the model server at {where} is rate limiting requests (HTTP 429){after}: "
                f"{detail}; wait and try again"
            )
        elif status >= 500:
            message = f"the model server at {where} failed (HTTP {status}){after}: {detail}"
        else:
            message = f"the model server at {where} rejected the request (HTTP {status}): {detail}"
        return self._error(message)


def _marking_done(lines: Iterator[str], ended: list[bool]) -> Iterator[str]:
    """``lines`` as they come; ``ended`` gets True once the stream's ``data: [DONE]`` is seen."""
    for line in lines:
        name, _, value = line.partition(":")
        if name == "data" and value.strip() == DONE:
            ended.append(True)
        yield line


def _is_openai(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").lower() == "api.openai.com"


def _excerpt(body: bytes, limit: int = 200) -> str:
    """A short one-line excerpt of an error body, preferring the JSON ``error.message``."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data.get("detail"))
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
        elif isinstance(error, str) and error:
            text = error
    text = " ".join(text.split()) or "(empty body)"
    return text if len(text) <= limit else text[: limit - 3] + "..."
