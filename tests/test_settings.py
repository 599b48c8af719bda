"""Settings: files, precedence, overlay trust, and errors that name file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from cliutil import write_config
from conch.config.paths import Paths
from conch.config.settings import Settings, load_prompt_config, load_settings, starter_config
from conch.errors import ConfigError


def load(home: Path, cwd: Path | None = None, environ: dict[str, str] | None = None, **kw):  # type: ignore[no-untyped-def]
    env = {"HOME": str(home), **(environ or {})}
    return load_settings(env, Paths.default(), cwd or home, **kw)


def test_defaults_select_the_embedded_provider_with_no_tools(isolated_dirs: Path) -> None:
    loaded = load(isolated_dirs)
    assert loaded.settings.ai.provider == "local"
    assert loaded.settings.default_prompt.tools == []
    assert not loaded.config_exists


def test_config_path_follows_xdg_config_home(isolated_dirs: Path) -> None:
    assert load(isolated_dirs).config_path == isolated_dirs / ".config" / "conch" / "config.yaml"


def test_conch_config_names_another_file(isolated_dirs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("ai:\n  provider: openai\n", encoding="utf-8")
    loaded = load(isolated_dirs, environ={"CONCH_CONFIG": str(other)})
    assert loaded.settings.ai.provider == "openai"
    assert loaded.config_path == other


def test_conch_config_naming_a_missing_file_is_an_error(isolated_dirs: Path) -> None:
    with pytest.raises(ConfigError, match=r"CONCH_CONFIG names .*missing\.yaml"):
        load(isolated_dirs, environ={"CONCH_CONFIG": "/nonexistent/missing.yaml"})


def test_precedence_is_flags_then_env_then_file(isolated_dirs: Path) -> None:
    write_config(
        isolated_dirs, "ai:\n  provider: openai\n  model: from-file\n  base_url: http://file\n"
    )
    loaded = load(
        isolated_dirs,
        environ={"CONCH_MODEL": "from-env", "OPENAI_BASE_URL": "http://env"},
        flags={"ai.model": "from-flag"},
    )
    assert loaded.settings.ai.model == "from-flag"
    assert loaded.settings.ai.base_url == "http://env"
    assert loaded.settings.ai.provider == "openai"


def test_unknown_key_names_file_line_and_key(isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "ai:\n  provider: local\n  temprature: 0.2\n")
    with pytest.raises(ConfigError) as err:
        load(isolated_dirs)
    assert str(err.value).startswith(f"{path}:3: ai.temprature: unknown key")


def test_wrong_type_names_file_line_and_key(isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "ai:\n  provider: local\nhistory:\n  max_bytes: lots\n")
    with pytest.raises(ConfigError, match=rf"{path}:4: history.max_bytes"):
        load(isolated_dirs)


def test_invalid_yaml_names_file_and_line(isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "ai:\n  provider: [local\n")
    with pytest.raises(ConfigError, match=rf"{path}:\d+"):
        load(isolated_dirs)


def test_non_mapping_config_is_an_error(isolated_dirs: Path) -> None:
    write_config(isolated_dirs, "- just\n- a list\n")
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        load(isolated_dirs)


def test_untrusted_overlay_is_ignored_and_trusted_one_is_used(isolated_dirs: Path) -> None:
    project = isolated_dirs / "proj" / "deep"
    project.mkdir(parents=True)
    overlay = isolated_dirs / "proj" / ".conch.yaml"
    overlay.write_text("ai:\n  model: from-overlay\n", encoding="utf-8")
    asked: list[Path] = []
    loaded = load(isolated_dirs, cwd=project, ask_trust=lambda p: asked.append(p) or False)
    assert loaded.settings.ai.model is None
    assert asked == [overlay]
    loaded = load(isolated_dirs, cwd=project, ask_trust=lambda p: True)
    assert loaded.settings.ai.model == "from-overlay"
    # Trust is pinned to the content: the next load does not ask again...
    loaded = load(isolated_dirs, cwd=project, ask_trust=lambda p: pytest.fail("asked again"))
    assert loaded.overlay_trusted
    # ...until the file changes.
    overlay.write_text("ai:\n  model: changed\n", encoding="utf-8")
    loaded = load(isolated_dirs, cwd=project, ask_trust=lambda p: False)
    assert loaded.settings.ai.model is None


def test_overlay_sits_below_environment(isolated_dirs: Path) -> None:
    (isolated_dirs / ".conch.yaml").write_text("ai:\n  model: overlay\n", encoding="utf-8")
    loaded = load(isolated_dirs, environ={"CONCH_MODEL": "env"}, ask_trust=lambda p: True)
    assert loaded.settings.ai.model == "env"


def test_starter_config_is_valid_and_has_no_tools() -> None:
    import yaml

    settings = Settings.model_validate(yaml.safe_load(starter_config()))
    assert settings.ai.provider == "local"
    assert settings.default_prompt.tools == []


def test_env_value_of_wrong_type_is_a_clear_error(isolated_dirs: Path) -> None:
    with pytest.raises(ConfigError, match=r"ai\.timeout"):
        load(isolated_dirs, environ={"CONCH_TIMEOUT": "soon"})


@pytest.mark.parametrize("value", ["-1", "11", "lots"])
def test_brevity_out_of_range_names_the_key(isolated_dirs: Path, value: str) -> None:
    path = write_config(isolated_dirs, f"generation:\n  brevity: {value}\n")
    with pytest.raises(ConfigError, match=rf"{path}:2: generation.brevity"):
        load(isolated_dirs)
    write_config(isolated_dirs, "generation:\n  brevity: 2.5\n")
    assert load(isolated_dirs).settings.generation.brevity == 2.5


def test_every_invalid_key_of_the_config_is_reported_with_its_line(isolated_dirs: Path) -> None:
    path = write_config(
        isolated_dirs,
        "ai:\n  temperature: banana-string\n  provider: banana\n"
        "history:\n  max_bytes: lots\ngeneration:\n  candidates: 2\n  bogus: 1\n",
    )
    with pytest.raises(ConfigError) as err:
        load(isolated_dirs)
    lines = str(err.value).splitlines()
    assert lines[0] == f"3 problems in {path}:"
    assert lines[1].startswith(f"  {path}:2: ai.temperature: ")
    assert lines[2].startswith(f"  {path}:5: history.max_bytes: ")
    assert lines[3].startswith(f"  {path}:8: generation.bogus: unknown key; check its spelling")
    assert len(lines) == 4


def test_every_invalid_key_of_a_trusted_overlay_is_reported_with_its_line(
    isolated_dirs: Path,
) -> None:
    overlay = isolated_dirs / ".conch.yaml"
    overlay.write_text("ai:\n  timeout: never\n\nexecution:\n  shel: zsh\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load(isolated_dirs, ask_trust=lambda p: True)
    lines = str(err.value).splitlines()
    assert lines[0] == f"2 problems in {overlay}:"
    assert lines[1].startswith(f"  {overlay}:2: ai.timeout: ")
    assert lines[2].startswith(f"  {overlay}:5: execution.shel: unknown key")


def test_every_problem_of_a_prompt_file_is_reported_with_its_line(tmp_path: Path) -> None:
    prompt = tmp_path / "p.yaml"
    prompt.write_text(
        "meta_prompt: [not, text]\ntools:\n  - name: jq\n  - nam: sed\n    force_explain: x\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as err:
        load_prompt_config(prompt)
    lines = str(err.value).splitlines()
    assert lines[0] == f"4 problems in {prompt}:"
    assert lines[1].startswith(f"  {prompt}:1: meta_prompt: ")
    assert {line.split(": ")[1] for line in lines[2:]} == {
        "tools.1.name",
        "tools.1.nam",
        "tools.1.force_explain",
    }
    assert f"  {prompt}:4: tools.1.nam: unknown key" in str(err.value)
    assert f"  {prompt}:5: tools.1.force_explain: " in str(err.value)


def test_every_bad_value_from_the_environment_is_reported(isolated_dirs: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load(isolated_dirs, environ={"CONCH_TIMEOUT": "soon", "CONCH_ENGINE": "turbo"})
    lines = str(err.value).splitlines()
    assert lines[0].startswith("2 problems in settings from the environment or flags")
    assert sorted(line.split(":")[0].strip() for line in lines[1:]) == [
        "ai.local.engine",
        "ai.timeout",
    ]
