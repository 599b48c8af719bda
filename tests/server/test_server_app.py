"""The API in-process: response shapes, streamed chunks, tools on both sides, the caps,
and every command going through conch's policy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from serverutil import WEATHER, chunks_of, user
from starlette.testclient import TestClient

from conch.messages import ToolCall
from conch.providers.scripted import ScriptedProvider
from conch.server.config import Caps

Client = Callable[..., TestClient]


def test_a_reply_comes_back_as_a_chat_completion(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("Hello there."))
    response = client.post("/v1/chat/completions", json=user("hi"))
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion" and body["model"] == "test-model"
    assert body["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello there."},
            "finish_reason": "stop",
        }
    ]
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0


def test_a_server_side_command_runs_through_the_policy_and_is_reported(
    client_for: Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    provider = ScriptedProvider.of(ToolCall("c1", "bash", '{"command": "ls"}'), "One file.")
    body = client_for(provider).post("/v1/chat/completions", json=user("list")).json()
    assert body["choices"][0]["message"]["content"] == "One file."
    [call] = body["conch"]["tool_calls"]
    assert call["name"] == "bash"
    assert "notes.txt" in call["result"]["content"] and not call["result"]["is_error"]


def test_a_command_that_is_not_read_only_is_refused_when_no_one_can_be_asked(
    client_for: Client, tmp_path: Path
) -> None:
    provider = ScriptedProvider.of(ToolCall("c1", "bash", '{"command": "touch made.txt"}'), "ok")
    body = client_for(provider).post("/v1/chat/completions", json=user("make a file")).json()
    [call] = body["conch"]["tool_calls"]
    assert call["result"]["is_error"]
    assert not (tmp_path / "made.txt").exists()


def test_the_stream_has_a_role_chunk_text_chunks_a_finish_and_done(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("Streaming works fine."))
    chunks = chunks_of(client, {**user("hi"), "stream": True})
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Streaming works fine."
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["object"] == "chat.completion.chunk" and "usage" not in c for c in chunks)


def test_include_usage_adds_a_last_chunk_with_no_choices(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("Counted."))
    chunks = chunks_of(
        client, {**user("hi"), "stream": True, "stream_options": {"include_usage": True}}
    )
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 1
    assert all(c["usage"] is None for c in chunks[:-1])


def test_a_client_tool_call_ends_the_turn_with_tool_calls_each_indexed(client_for: Client) -> None:
    calls = [
        ToolCall("a", "get_weather", '{"city": "Paris"}'),
        ToolCall("b", "get_weather", '{"city": "Oslo"}'),
    ]
    client = client_for(ScriptedProvider.of(["Checking.", *calls]))
    chunks = chunks_of(client, {**user("weather?"), "stream": True, "tools": [WEATHER]})
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    tool_chunks = [d["tool_calls"] for d in deltas if "tool_calls" in d]
    assert [[t["index"] for t in tc] for tc in tool_chunks] == [[0], [1]]
    cities = [json.loads(tc[0]["function"]["arguments"])["city"] for tc in tool_chunks]
    assert cities == ["Paris", "Oslo"]
    assert all(
        tc[0]["id"].startswith("call_") and tc[0]["type"] == "function" for tc in tool_chunks
    )
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_the_client_s_tool_result_lets_the_model_go_on(client_for: Client) -> None:
    provider = ScriptedProvider.of(
        ToolCall("a", "get_weather", '{"city": "Paris"}'), "Sunny, 21 C."
    )
    client = client_for(provider)
    first = client.post(
        "/v1/chat/completions", json={**user("weather?"), "tools": [WEATHER]}
    ).json()
    message = first["choices"][0]["message"]
    assert first["choices"][0]["finish_reason"] == "tool_calls" and message["content"] is None
    call = message["tool_calls"][0]
    history = [
        *user("weather?")["messages"],
        message,
        {"role": "tool", "tool_call_id": call["id"], "content": '{"sky": "sunny"}'},
    ]
    second = client.post("/v1/chat/completions", json={"messages": history, "tools": [WEATHER]})
    assert second.json()["choices"][0]["message"]["content"] == "Sunny, 21 C."
    assert provider.sent[-1].messages[-1].content == '{"sky": "sunny"}'


def test_tool_choice_none_offers_no_tools(client_for: Client) -> None:
    provider = ScriptedProvider.of("No tools.")
    client_for(provider).post(
        "/v1/chat/completions", json={**user("hi"), "tools": [WEATHER], "tool_choice": "none"}
    )
    assert provider.sent[0].tools is None


def test_tool_choice_naming_a_tool_offers_that_tool_only(client_for: Client) -> None:
    provider = ScriptedProvider.of("Fine.")
    choice = {"type": "function", "function": {"name": "get_weather"}}
    client_for(provider).post(
        "/v1/chat/completions", json={**user("hi"), "tools": [WEATHER], "tool_choice": choice}
    )
    assert [t.name for t in provider.sent[0].tools or []] == ["get_weather"]


def test_tool_choice_naming_an_unknown_tool_is_a_400(client_for: Client) -> None:
    choice = {"type": "function", "function": {"name": "nope"}}
    response = client_for(ScriptedProvider.of("x")).post(
        "/v1/chat/completions", json={**user("hi"), "tool_choice": choice}
    )
    assert response.status_code == 400 and response.json()["error"]["param"] == "tool_choice"


def test_a_client_tool_named_like_a_conch_tool_is_a_400(client_for: Client) -> None:
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    response = client_for(ScriptedProvider.of("x")).post(
        "/v1/chat/completions", json={**user("hi"), "tools": [tool]}
    )
    assert response.status_code == 400 and "bash" in response.json()["error"]["message"]


def test_response_format_and_max_completion_tokens_reach_the_model(client_for: Client) -> None:
    provider = ScriptedProvider.of('{"n": 1}')
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    body = {
        **user("a number"),
        "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": schema}},
        "max_completion_tokens": 33,
        "temperature": 0.5,
    }
    reply = client_for(provider).post("/v1/chat/completions", json=body).json()
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"n": 1}
    sent = provider.sent[0]
    assert sent.options.json_schema == schema
    assert (sent.options.max_tokens, sent.options.temperature) == (33, 0.5)
    assert sent.tools is None  # a structured reply is the reply itself: no tool steps


def test_the_client_s_system_text_joins_conch_s_system_prompt(client_for: Client) -> None:
    provider = ScriptedProvider.of("ok")
    messages = [{"role": "system", "content": "Answer like a pirate."}, *user("hi")["messages"]]
    client_for(provider).post("/v1/chat/completions", json={"messages": messages})
    system = provider.sent[0].messages[0]
    assert system.role == "system" and "Answer like a pirate." in system.content
    assert "bash" in system.content  # conch's own layers are still there


def test_server_side_tool_calls_stream_as_extra_chunks_with_an_empty_delta(
    client_for: Client,
) -> None:
    provider = ScriptedProvider.of(ToolCall("c1", "datetime", "{}"), "It is late.")
    chunks = chunks_of(client_for(provider), {**user("time?"), "stream": True})
    extras = [c for c in chunks if "conch" in c]
    assert [e["conch"]["type"] for e in extras] == ["conch.tool_call", "conch.tool_result"]
    assert all(e["choices"][0]["delta"] == {} for e in extras)
    assert extras[1]["conch"]["name"] == "datetime" and not extras[1]["conch"]["is_error"]


def test_stream_options_can_turn_the_extra_chunks_off(client_for: Client) -> None:
    provider = ScriptedProvider.of(ToolCall("c1", "datetime", "{}"), "It is late.")
    body = {**user("time?"), "stream": True, "stream_options": {"conch_events": False}}
    assert not [c for c in chunks_of(client_for(provider), body) if "conch" in c]


def test_an_oversize_body_is_refused_with_a_413(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("x"), caps=Caps(body_bytes=1000))
    response = client.post("/v1/chat/completions", json=user("y" * 2000))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"


def test_a_chunked_body_over_the_cap_is_refused_with_a_413(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of("x"), caps=Caps(body_bytes=1000))
    payload = json.dumps(user("y" * 2000)).encode()
    response = client.post(
        "/v1/chat/completions",
        content=iter([payload[:600], payload[600:]]),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413


def test_a_body_that_is_not_json_content_is_a_415(client_for: Client) -> None:
    response = client_for(ScriptedProvider.of("x")).post(
        "/v1/chat/completions",
        content=json.dumps(user("hi")),
        headers={"Content-Type": "text/plain"},
    )
    assert response.status_code == 415


def test_an_unknown_route_is_a_404_in_openai_s_error_shape(client_for: Client) -> None:
    response = client_for(ScriptedProvider.of("x")).get("/v1/nothing")
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found"


def test_a_model_failure_is_a_502_and_a_give_up_a_500(client_for: Client) -> None:
    from conch.errors import ProviderError

    failing = client_for(ScriptedProvider.of(ProviderError("connection refused")))
    response = failing.post("/v1/chat/completions", json=user("hi"))
    assert (
        response.status_code == 502 and "connection refused" in response.json()["error"]["message"]
    )
    looping = ScriptedProvider.from_function(
        lambda messages, options: ToolCall("c", "datetime", "{}")
    )
    response = client_for(looping, max_iterations=2).post("/v1/chat/completions", json=user("hi"))
    assert response.status_code == 500 and response.json()["error"]["code"] == "agent_stopped"


def test_an_error_in_a_stream_comes_as_an_error_chunk(client_for: Client) -> None:
    from conch.errors import ProviderError

    client = client_for(ScriptedProvider.of(ProviderError("it broke")))
    chunks = chunks_of(client, {**user("hi"), "stream": True})
    assert "it broke" in chunks[-1]["error"]["message"]


def test_models_tools_and_health_answer(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of())
    assert [m["id"] for m in client.get("/v1/models").json()["data"]] == ["test-model"]
    tools = {t["function"]["name"]: t for t in client.get("/v1/tools").json()["data"]}
    assert {"bash", "fs_read", "datetime", "tool_lookup"} <= set(tools)
    bash: dict[str, Any] = tools["bash"]
    assert bash["function"]["parameters"]["required"] == ["command"]
    assert bash["function"]["description"] and bash["trigger"]
    assert client.get("/health").json()["status"] == "ok"


def test_the_web_page_and_its_files_are_served(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of())
    page = client.get("/")
    assert page.status_code == 200 and "/static/chat.js" in page.text
    assert "fetch(" in client.get("/static/chat.js").text
    assert client.get("/static/chat.css").status_code == 200


def test_a_request_naming_another_host_is_refused_on_a_loopback_server(client_for: Client) -> None:
    client = client_for(ScriptedProvider.of())
    response = client.get("/health", headers={"Host": "attacker.example"})
    assert response.status_code == 400


def test_a_model_that_cannot_be_opened_is_a_502(tmp_path: Path) -> None:
    from conch.errors import ProviderError
    from conch.server.app import create_app
    from conch.server.config import ServerConfig
    from conch.server.models import ModelTable

    def no_key() -> ScriptedProvider:
        raise ProviderError("no API key for https://api.openai.com/v1")

    app = create_app(ServerConfig(no_auth=True), ModelTable({"gpt": no_key}))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        response = client.post("/v1/chat/completions", json=user("hi"))
    assert response.status_code == 502
    assert response.json()["error"]["message"] == "no API key for https://api.openai.com/v1"


def test_the_models_are_the_configured_one_then_the_models_section() -> None:
    from conch.config.settings import AISettings, Settings
    from conch.server.models import ModelTable

    settings = Settings(
        ai=AISettings(provider="openai", model="gpt-x"),
        models={"small": AISettings(provider="scripted", script=["Small reply."])},
    )
    table = ModelTable.from_settings(settings)
    assert table.names == ["gpt-x", "small"]
    assert (table.resolve("small"), table.resolve("gpt-4o"), table.resolve(None)) == (
        "small",
        "gpt-x",
        "gpt-x",
    )
    assert table.provider("small").name == "scripted"  # opened at its first use
    table.close()
    assert ModelTable.from_settings(Settings()).names == ["qwen2.5-coder-1.5b-instruct-q4_k_m"]


def test_a_message_of_several_actions_is_one_turn_even_for_a_small_model(
    client_for: Client,
) -> None:
    # a provider named "local" writes JSON steps, where sessions elsewhere split such a message
    provider = ScriptedProvider.of('{"answer": "Both done."}')
    provider.name = "local"
    client = client_for(provider)
    response = client.post(
        "/v1/chat/completions", json=user("Write a haiku about the sea. Then print it twice.")
    )
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "Both done."
    assert len(provider.sent) == 1
