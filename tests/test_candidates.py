"""Choosing among candidates by their dry runs, and propose()'s sampling and repair flow."""

from __future__ import annotations

from pathlib import Path

import pytest

from cliutil import DEBIAN
from conch.command.candidates import Trial, choose, is_doubtful
from conch.command.propose import Pipeline
from conch.command.request import RequestContext
from conch.config.settings import Settings
from conch.errors import ProviderError
from conch.execute.dryrun import DryRun, DryRunner, SandboxDryRunner
from conch.messages import GenerationOptions, Message
from conch.policy import PolicyContext, assess
from conch.providers.scripted import ScriptedProvider
from requires import needs

PLATFORM = DEBIAN
UNSAFE = PolicyContext(unsafe=True)


def trial(command: str, exit_code: int = 0, out: str = "", err: str = "") -> Trial:
    return Trial(command, assess(command, UNSAFE), DryRun(command, exit_code, out.encode(), err))


def test_a_working_candidate_beats_a_failing_greedy_one() -> None:
    trials = [
        trial("sort -h -n f", 2, err="sort: options '-hn' are incompatible"),
        trial("sort -h f", 0, out="1K\n2M\n"),
    ]
    assert choose(trials) == 1


def test_the_output_most_candidates_agree_on_wins() -> None:
    trials = [
        trial("ls -t | head -1", 0, out="a\n"),
        trial("ls -t | head -n 1", 0, out="b\n"),
        trial("ls -t  |  head -n1", 0, out="b\n"),
    ]
    assert choose(trials) == 1


def test_order_and_spacing_of_output_do_not_split_a_vote() -> None:
    trials = [
        trial("wc -l a b", 0, out=" 1 a\n 2 b\n"),
        trial("wc -l b a", 0, out="2 b\n1 a\n"),
        trial("cat a b | wc -l", 0, out="3\n"),
    ]
    assert choose(trials) == 0


def test_on_a_tie_the_greedy_answer_stays() -> None:
    trials = [trial("ls", 0, out="x\n"), trial("ls -a", 0, out=".\nx\n")]
    assert choose(trials) == 0


def test_printing_something_beats_printing_nothing_or_warning() -> None:
    trials = [
        trial("find . -name '*.PY'"),
        trial("find / -name x", 0, out="/x\n", err="find: '/root': Permission denied"),
        trial("find . -name '*.py'", 0, out="./a.py\n"),
    ]
    assert choose(trials) == 2
    assert is_doubtful(trials[0]) and is_doubtful(trials[1]) and not is_doubtful(trials[2])


def test_a_write_attempt_is_not_held_against_a_command() -> None:
    trials = [
        trial("touch a", 1, err="touch: cannot touch 'a': Read-only file system"),
        trial("touch -x a", 1, err="touch: invalid option -- 'x'"),
    ]
    assert choose(trials) == 0
    assert not is_doubtful(trials[0])


def scratch(command: str, exit_code: int = 0, out: str = "", err: str = "") -> Trial:
    """A write command's trial, judged by its run in a throwaway copy of the directory."""
    run = DryRun(command, exit_code, out.encode(), err, scratch=True)
    return Trial(command, assess(command, UNSAFE), run)


def test_a_write_command_that_works_in_its_copy_is_ok_even_silently() -> None:
    silent = scratch("sort -r notes.txt > out.txt")
    assert silent.outcome == "ok" and not is_doubtful(silent)
    noted = scratch("dd if=a of=b", err="1+0 records in\n1+0 records out")
    assert noted.outcome == "ok" and "error" not in noted.to_json()
    assert silent.to_json() == {
        "command": "sort -r notes.txt > out.txt",
        "source": "greedy",
        "decision": str(silent.verdict.decision),
        "outcome": "ok",
        "exit_code": 0,
        "scratch": True,
    }


def test_a_write_command_that_fails_in_its_copy_is_a_failure() -> None:
    failed = scratch("sort missing.txt > out.txt", 2, err="sort: cannot read: missing.txt: No such")
    assert failed.outcome == "failed" and is_doubtful(failed)
    data = failed.to_json()
    assert data["scratch"] is True and "missing.txt" in str(data["error"])
    assert scratch("grep x a > b", 1).outcome == "empty"
    outside = scratch("touch /usr/x", 1, err="touch: cannot touch '/usr/x': Read-only file system")
    assert outside.outcome == "wrote" and not is_doubtful(outside)
    assert "scratch" not in trial("ls", 0, out="a\n").to_json()


def test_write_commands_vote_with_the_command_not_what_they_printed() -> None:
    trials = [
        scratch("sort missing.txt > out.txt", 2, err="sort: cannot read: missing.txt"),
        scratch("cp -v a b", 0, out="'a' -> 'b'\n"),
        scratch("cp  a b"),
        scratch("cp a b"),
    ]
    assert trials[2].signature() == trials[3].signature() == ("command", "cp a b")
    assert choose(trials) == 2


def test_a_policy_rejected_candidate_is_never_chosen() -> None:
    rejected = Trial("rm -rf /", assess("rm -rf /", UNSAFE))
    assert choose([rejected, trial("ls", 0, out="a\n")]) == 1


# -- propose(): sampling, dry runs and repair, with a scripted model and a table of outcomes --


class TableRunner:
    """A dry runner that looks commands up in a table (unknown commands fail)."""

    def __init__(self, table: dict[str, tuple[int, str, str]]) -> None:
        self.table = table
        self.ran: list[str] = []

    def __call__(self, command: str) -> DryRun:
        self.ran.append(command)
        code, out, err = self.table.get(command, (127, "", f"sh: {command}: not found"))
        return DryRun(command, code, out.encode(), err)


def run_propose(
    provider: ScriptedProvider,
    runner: DryRunner | None,
    request: str = "sort sizes.txt by size",
    **generation: object,
) -> object:
    # The review's own tests see every answer made unless they test stopping early.
    generation.setdefault("review_stop", "never")
    settings = Settings.model_validate({"generation": generation, "validation": {"enabled": False}})
    pipeline = Pipeline(provider, settings, PLATFORM, UNSAFE, None, Path("/nonexistent"), runner)
    return pipeline.propose(RequestContext(request=request))


def test_a_good_greedy_answer_costs_no_extra_model_call() -> None:
    provider = ScriptedProvider.of("sort -h sizes.txt")
    runner = TableRunner({"sort -h sizes.txt": (0, "1K\n", "")})
    proposal = run_propose(provider, runner)
    assert proposal.command == "sort -h sizes.txt"  # type: ignore[attr-defined]
    assert len(provider.sent) == 1 and runner.ran == ["sort -h sizes.txt"]


def test_a_failing_greedy_answer_is_replaced_by_a_working_sample() -> None:
    provider = ScriptedProvider.of("sort -h -n sizes.txt", "sort -h sizes.txt", "sort -h sizes.txt")
    runner = TableRunner(
        {
            "sort -h -n sizes.txt": (2, "", "sort: options '-hn' are incompatible"),
            "sort -h sizes.txt": (0, "1K\n2M\n", ""),
        }
    )
    proposal = run_propose(provider, runner, candidates=3)
    assert proposal.command == "sort -h sizes.txt"  # type: ignore[attr-defined]
    samples = provider.sent[1:]
    assert [s.options.temperature for s in samples] == [0.8, 0.8]
    assert [s.options.seed for s in samples] == [1, 2]
    assert runner.ran == ["sort -h -n sizes.txt", "sort -h sizes.txt"]  # identical ones reused
    sources = [t["source"] for t in proposal.trials_json()]  # type: ignore[attr-defined]
    assert sources == ["greedy", "sample", "sample"]


def test_when_every_candidate_fails_the_model_sees_the_error_once() -> None:
    provider = ScriptedProvider.of("sort -X a", "sort -Y a", "sort -h a")
    runner = TableRunner(
        {
            "sort -X a": (2, "", "sort: invalid option -- 'X'"),
            "sort -Y a": (2, "", "sort: invalid option -- 'Y'"),
            "sort -h a": (0, "1K\n", ""),
        }
    )
    proposal = run_propose(provider, runner, candidates=2)
    assert proposal.command == "sort -h a"  # type: ignore[attr-defined]
    repair: list[Message] = provider.sent[2].messages
    assert repair[-2] == Message("assistant", "sort -X a")
    assert "invalid option -- 'X'" in repair[-1].content
    assert provider.sent[2].options.temperature == 0.0


def test_a_repair_that_also_fails_leaves_the_first_answer() -> None:
    provider = ScriptedProvider.of("sort -X a", "sort -Z a")
    runner = TableRunner({})
    proposal = run_propose(provider, runner, candidates=1)
    assert proposal.command == "sort -X a"  # type: ignore[attr-defined]
    assert len(provider.sent) == 2


def test_without_dry_runs_the_greedy_answer_is_used_as_is() -> None:
    provider = ScriptedProvider.of("sort -X a")
    proposal = run_propose(provider, TableRunner({}), dry_run=False)
    assert proposal.command == "sort -X a"  # type: ignore[attr-defined]
    assert len(provider.sent) == 1
    assert proposal.trials_json()[0]["outcome"] == "untried"  # type: ignore[attr-defined]


def test_sample_when_always_samples_even_after_a_good_answer() -> None:
    provider = ScriptedProvider.of("ls -a", "ls", "ls")
    runner = TableRunner({"ls -a": (0, ".\nx\n", ""), "ls": (0, "x\n", "")})
    proposal = run_propose(provider, runner, candidates=3, sample_when="always")
    assert proposal.command == "ls"  # type: ignore[attr-defined]


def test_with_next_examples_every_other_sample_sees_the_next_nearest_examples() -> None:
    from conch.command.generate import select_examples

    provider = ScriptedProvider.of("sort -X a", "sort -Y a", "sort -Z a", "sort -h a")
    runner = TableRunner({"sort -h a": (0, "1K\n", "")})
    proposal = run_propose(provider, runner, candidates=4, few_shot=2, sample_examples="next")
    assert proposal.command == "sort -h a"  # type: ignore[attr-defined]

    def shown(sent: object) -> list[str]:  # the worked examples' requests in one prompt
        messages = sent.messages[1:-1]  # type: ignore[attr-defined]
        return [m.content for m in messages if m.role == "user"]

    prompt, request = Settings().default_prompt, "sort sizes.txt by size"
    nearest_two = [e.request for e in select_examples(prompt, request, 2)]
    next_two = [e.request for e in select_examples(prompt, request, 2, skip=2)]
    assert nearest_two and next_two and set(nearest_two).isdisjoint(next_two)
    greedy, first, second, third = provider.sent
    assert shown(greedy) == shown(second) == nearest_two  # seeds 0 and 2: the nearest
    assert shown(first) == shown(third) == next_two  # seeds 1 and 3: the next ones
    assert [s.options.seed for s in provider.sent[1:]] == [1, 2, 3]


def test_brevity_is_the_end_bias_of_every_command_generation() -> None:
    provider = ScriptedProvider.of("sort -X a", "sort -h a", "sort -h a", "sort -h a")
    runner = TableRunner({"sort -h a": (0, "1K\n", "")})
    run_propose(provider, runner, candidates=4, brevity=1.5)
    assert len(provider.sent) == 4  # the greedy answer failed: three samples
    assert {s.options.end_bias for s in provider.sent} == {1.5}
    run_propose(provider := ScriptedProvider.of("sort -h a"), runner)
    assert provider.sent[0].options.end_bias == 0.0  # off by default


class ScratchTable(TableRunner):
    """Table outcomes as scratch runs: write commands judged in a copy of the directory,
    where one that exits 0 created out.txt holding ``written`` (the same for every command)."""

    def __init__(self, table: dict[str, tuple[int, str, str]], written: str = "b\na\n") -> None:
        super().__init__(table)
        self.written = written

    def __call__(self, command: str) -> DryRun:
        run = super().__call__(command)
        ok = run.exit_code == 0
        changes = ("created out.txt",) if ok else ()
        written = (("out.txt", self.written.encode()),) if ok else ()
        return DryRun(
            command,
            run.exit_code,
            run.stdout,
            run.stderr,
            scratch=True,
            changes=changes,
            written=written,
        )


def test_a_write_command_failing_in_its_copy_is_replaced_by_a_working_sample() -> None:
    failing, working = "sort -r textfile1.txt > out.txt", "sort -r notes.txt > out.txt"
    provider = ScriptedProvider.of(failing, working, working)
    runner = ScratchTable(
        {
            failing: (2, "", "sort: cannot read: textfile1.txt: No such file or directory"),
            working: (0, "", ""),
        }
    )
    proposal = run_propose(provider, runner, candidates=3)
    assert proposal.command == working  # type: ignore[attr-defined]
    assert len(provider.sent) == 3  # the greedy answer and two samples, no repair
    trials = proposal.trials_json()  # type: ignore[attr-defined]
    assert [(t["outcome"], t["scratch"]) for t in trials] == [
        ("failed", True),
        ("ok", True),
        ("ok", True),
    ]


def test_a_write_command_that_works_in_its_copy_costs_no_extra_model_call() -> None:
    provider = ScriptedProvider.of("sort -r notes.txt > out.txt")
    runner = ScratchTable({"sort -r notes.txt > out.txt": (0, "", "")})
    proposal = run_propose(provider, runner)
    assert proposal.command == "sort -r notes.txt > out.txt"  # type: ignore[attr-defined]
    assert len(provider.sent) == 1


@needs("bubblewrap")
def test_in_a_real_directory_a_failing_write_gives_way_to_a_working_one(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a\nb\n", encoding="utf-8")
    runner = SandboxDryRunner(tmp_path, "/bin/sh", {"PATH": "/usr/bin:/bin"})
    failing, working = "sort -r textfile1.txt > out.txt", "sort -r notes.txt > out.txt"
    provider = ScriptedProvider.of(failing, "tar --bogus -czf x.tgz notes.txt", working)
    proposal = run_propose(provider, runner, candidates=3)
    assert proposal.command == working  # type: ignore[attr-defined]
    assert len(provider.sent) == 3
    outcomes = [t["outcome"] for t in proposal.trials_json()]  # type: ignore[attr-defined]
    assert outcomes == ["failed", "failed", "ok"]
    assert not (tmp_path / "out.txt").exists()


@needs("bubblewrap")
def test_in_a_real_directory_a_failing_write_is_repaired_with_its_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a\nb\n", encoding="utf-8")
    runner = SandboxDryRunner(tmp_path, "/bin/sh", {"PATH": "/usr/bin:/bin"})
    failing, fixed = "sort -r textfile1.txt > out.txt", "sort -r notes.txt > out.txt"
    provider = ScriptedProvider.of(failing, failing, fixed)
    proposal = run_propose(provider, runner, candidates=2)
    assert proposal.command == fixed  # type: ignore[attr-defined]
    repair: list[Message] = provider.sent[2].messages
    assert "textfile1.txt" in repair[-1].content
    sources = [(t["source"], t["outcome"]) for t in proposal.trials_json()]  # type: ignore[attr-defined]
    assert sources == [("greedy", "failed"), ("sample", "failed"), ("repair", "ok")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "notes.txt"]


def test_greedy_options_are_unchanged() -> None:
    provider = ScriptedProvider.of("ls")
    run_propose(provider, None)
    options: GenerationOptions = provider.sent[0].options
    assert (options.temperature, options.seed, options.max_tokens) == (0.0, None, 256)


# -- generation.review: answers made with examples found three ways, scored by the model --


def test_review_keeps_the_answer_whose_command_makes_the_request_likeliest() -> None:
    provider = ScriptedProvider.of("sort sizes.txt", "sort -h sizes.txt", "sort -n sizes.txt")
    provider.scores = {"sort sizes.txt": -9.0, "sort -h sizes.txt": -2.0, "sort -n sizes.txt": -5.0}
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort -h sizes.txt"  # type: ignore[attr-defined]
    assert provider.scored == ["sort sizes.txt", "sort -h sizes.txt", "sort -n sizes.txt"]
    trials = proposal.trials_json()  # type: ignore[attr-defined]
    assert [t.get("examples", "shipped") for t in trials] == ["shipped", "larger", "plain"]
    assert [t["likelihood"] for t in trials] == [-9.0, -2.0, -5.0]
    # The three answers saw different worked examples; the request came last each time.
    shown = [[m.content for m in s.messages[1:-1]] for s in provider.sent]
    assert shown[0] != shown[1] and shown[0] != shown[2]
    assert all(s.messages[-1].content.endswith("sort sizes.txt by size") for s in provider.sent)


def test_review_keeps_the_first_answer_on_a_tie_and_scores_each_command_once() -> None:
    provider = ScriptedProvider.of("sort a", "sort -h a", "sort a")
    provider.scores = {"sort a": -3.0, "sort -h a": -3.0}
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort a"  # type: ignore[attr-defined]
    assert provider.scored == ["sort a", "sort -h a"]


def test_a_provider_that_cannot_score_makes_only_the_first_answer() -> None:
    provider = ScriptedProvider.of("sort a")  # scores None: likelihood answers None
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort a"  # type: ignore[attr-defined]
    assert len(provider.sent) == 1 and proposal.notes == []  # type: ignore[attr-defined]


def test_an_unusable_second_answer_leaves_the_others_and_says_why() -> None:
    provider = ScriptedProvider.of("sort a", "", "sort -h a")  # "": nothing to run
    provider.scores = {"sort a": -4.0, "sort -h a": -1.0}
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort -h a"  # type: ignore[attr-defined]
    notes = proposal.notes  # type: ignore[attr-defined]
    assert len(notes) == 1 and notes[0].startswith("no answer with examples larger: ")


def test_review_one_makes_one_answer_and_scores_nothing() -> None:
    provider = ScriptedProvider.of("sort a")
    provider.scores = {"sort a": -1.0}
    proposal = run_propose(provider, None, dry_run=False, review=1)
    assert proposal.command == "sort a"  # type: ignore[attr-defined]
    assert len(provider.sent) == 1 and provider.scored == []


def test_each_answer_runs_the_whole_pipeline_with_its_dry_runs() -> None:
    provider = ScriptedProvider.of("sort -X a", "sort -h a", "sort -h a", "sort -h a")
    provider.scores = {"sort -X a": -1.0, "sort -h a": -2.0}
    runner = TableRunner({"sort -h a": (0, "1K\n", "")})
    proposal = run_propose(provider, runner, candidates=2)
    # answer 1: "sort -X a" fails its dry run, a sample "sort -h a" works and is chosen;
    # answers 2 and 3 agree; one command to score, so the first answer's choice stands.
    assert proposal.command == "sort -h a"  # type: ignore[attr-defined]
    assert provider.scored == ["sort -h a"]
    # A command is dry-run once, whichever answer tried it first.
    assert runner.ran == ["sort -X a", "sort -h a"]
    outcomes = [t["outcome"] for t in proposal.trials_json()]  # type: ignore[attr-defined]
    assert outcomes == ["failed", "ok", "ok", "ok"]


@pytest.mark.parametrize(
    ("last_prints", "chosen", "outcomes"),
    [
        # "sort -h a" fails and "sort sizes.txt" prints nothing: the one answer that printed
        # something wins over both likelier ones.
        ("", "sort -h sizes.txt", ["failed", "ok", "empty"]),
        # Both print: among answers whose dry runs went alike, the likeliest wins.
        ("1K\n", "sort sizes.txt", ["failed", "ok", "ok"]),
    ],
)
def test_the_review_keeps_the_likeliest_of_the_answers_whose_dry_runs_went_best(
    last_prints: str, chosen: str, outcomes: list[str]
) -> None:
    # candidates=1: each answer is its greedy command, whatever its dry run did.
    provider = ScriptedProvider.of("sort -h a", "sort -h sizes.txt", "sort sizes.txt")
    provider.scores = {"sort -h a": -1.0, "sort -h sizes.txt": -3.0, "sort sizes.txt": -2.0}
    runner = TableRunner(
        {"sort -h sizes.txt": (0, "1K\n", ""), "sort sizes.txt": (0, last_prints, "")}
    )
    proposal = run_propose(provider, runner, candidates=1)
    assert proposal.command == chosen  # type: ignore[attr-defined]
    assert [t["outcome"] for t in proposal.trials_json()] == outcomes  # type: ignore[attr-defined]


def test_a_command_the_policy_rejects_never_wins_the_review() -> None:
    provider = ScriptedProvider.of("ls", "rm -rf /", "ls -l")
    provider.scores = {"ls": -6.0, "rm -rf /": -1.0, "ls -l": -8.0}
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "ls"  # type: ignore[attr-defined]


def test_a_failed_score_keeps_the_answer_without_one_and_says_why() -> None:
    provider = ScriptedProvider.of("sort a", "sort -h a")
    provider.scores = {"sort a": -4.0}  # "sort -h a" cannot be scored: ProviderError
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort a"  # type: ignore[attr-defined]
    trials = proposal.trials_json()  # type: ignore[attr-defined]
    assert [t["command"] for t in trials] == ["sort a", "sort -h a"]
    assert "likelihood" not in trials[1]
    assert proposal.notes == [  # type: ignore[attr-defined]
        "no score for the answer with examples larger: "
        "scripted provider has no score for this command"
    ]
    assert len(provider.sent) == 2  # the provider failed: no third answer


def test_a_failing_provider_ends_the_review_instead_of_waiting_again() -> None:
    provider = ScriptedProvider.of("sort a", ProviderError("timed out"), "sort -h a")
    provider.scores = {"sort a": -4.0, "sort -h a": -1.0}
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort a"  # type: ignore[attr-defined]
    assert len(provider.sent) == 2
    assert proposal.notes == ["no answer with examples larger: timed out"]  # type: ignore[attr-defined]


def test_ctrl_c_while_reviewing_keeps_the_answers_so_far() -> None:
    provider = ScriptedProvider.of("sort a", "sort -h a", KeyboardInterrupt())
    provider.scores = {"sort a": -4.0, "sort -h a": -1.0}
    proposal = run_propose(provider, None, dry_run=False)
    assert proposal.command == "sort -h a"  # type: ignore[attr-defined]
    assert proposal.notes == [  # type: ignore[attr-defined]
        "review interrupted; the best answer so far is shown"
    ]


def test_the_explainer_is_told_what_the_dry_run_saw() -> None:
    from conch.command.generate import explain
    from conch.providers.scripted import ScriptedProvider

    provider = ScriptedProvider.of("It fails: du cannot summarise with a depth.")
    explain(provider, "du -sh --max-depth=1 .", "disk usage", seen="failed (exit 1): du: x")

    assert "it failed (exit 1): du: x." in provider.sent[0].messages[-1].content


# -- generation.review_stop: the first answer stands alone when it worked --


@pytest.mark.parametrize(
    ("threshold", "first_score", "answers", "scored"),
    [
        (None, -9.0, 1, []),  # worked: no score, no other answer
        (-5.0, -2.0, 1, ["sort -h sizes.txt"]),  # worked and likely enough
        (-5.0, -9.0, 3, ["sort -h sizes.txt", "sort -n sizes.txt"]),  # not likely enough
    ],
)
def test_review_stops_after_a_first_answer_that_worked(
    threshold: float | None, first_score: float, answers: int, scored: list[str]
) -> None:
    provider = ScriptedProvider.of("sort -h sizes.txt", "sort -n sizes.txt", "sort -n sizes.txt")
    provider.scores = {"sort -h sizes.txt": first_score, "sort -n sizes.txt": -1.0}
    runner = TableRunner(
        {"sort -h sizes.txt": (0, "1K\n", ""), "sort -n sizes.txt": (0, "1\n", "")}
    )
    proposal = run_propose(
        provider, runner, candidates=1, review_stop="worked", review_stop_score=threshold
    )
    assert len(provider.sent) == answers and provider.scored == scored
    assert proposal.command == ("sort -h sizes.txt" if answers == 1 else "sort -n sizes.txt")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("forward", "answers", "scored"),
    [
        (-0.5, 1, []),  # sure of the command it wrote: no score asked for, no other answer
        (-6.0, 1, ["sort -h sizes.txt"]),  # not sure: the score decides (likely enough)
        (None, 1, ["sort -h sizes.txt"]),  # no log-probability from the provider: the same
    ],
)
def test_review_stops_without_a_score_when_the_model_was_sure_of_a_command_that_worked(
    forward: float | None, answers: int, scored: list[str]
) -> None:
    provider = ScriptedProvider.of("sort -h sizes.txt", "sort -n sizes.txt", "sort -n sizes.txt")
    provider.scores = {"sort -h sizes.txt": -2.0, "sort -n sizes.txt": -1.0}
    provider.logprobs = {"sort -h sizes.txt": forward} if forward is not None else {}
    runner = TableRunner({"sort -h sizes.txt": (0, "1K\n", "")})
    proposal = run_propose(
        provider,
        runner,
        candidates=1,
        review_stop="worked",
        review_stop_score=-5.0,
        review_stop_forward=-1.0,
    )
    assert len(provider.sent) == answers and provider.scored == scored
    assert all(sent.options.logprobs for sent in provider.sent)
    first = proposal.trials_json()[0]  # type: ignore[attr-defined]
    assert first.get("forward") == forward


def test_a_sure_command_whose_dry_run_failed_is_reviewed() -> None:
    provider = ScriptedProvider.of("sort -X a", "sort -h sizes.txt", "sort -h sizes.txt")
    provider.scores = {"sort -X a": -1.0, "sort -h sizes.txt": -2.0}
    provider.logprobs = {"sort -X a": -0.1}
    runner = TableRunner({"sort -h sizes.txt": (0, "1K\n", "")})
    proposal = run_propose(
        provider, runner, candidates=1, repair=False, review_stop="worked", review_stop_forward=-1.0
    )
    assert len(provider.sent) == 3
    assert proposal.command == "sort -h sizes.txt"  # type: ignore[attr-defined]


def test_review_goes_on_when_the_first_answer_did_not_work() -> None:
    provider = ScriptedProvider.of("sort -X a", "sort -h sizes.txt", "sort -h sizes.txt")
    provider.scores = {"sort -X a": -1.0, "sort -h sizes.txt": -2.0}
    runner = TableRunner({"sort -h sizes.txt": (0, "1K\n", "")})
    proposal = run_propose(provider, runner, candidates=1, repair=False, review_stop="worked")
    assert len(provider.sent) == 3
    assert proposal.command == "sort -h sizes.txt"  # type: ignore[attr-defined]


def test_shared_examples_come_first_and_are_the_same_for_every_answer() -> None:
    from conch.command.examples import shared_examples
    from conch.command.generate import select_examples

    provider = ScriptedProvider.of("sort -X a", "sort -h a")
    runner = TableRunner({"sort -h a": (0, "1K\n", "")})
    run_propose(provider, runner, candidates=2, few_shot=1, shared_examples=3)
    shared = [e.request for e in shared_examples(3)]
    own = [
        e.request for e in select_examples(Settings().default_prompt, "sort sizes.txt by size", 1)
    ]
    assert len(shared) == 3 and len(own) == 1
    for sent in provider.sent:
        users = [m.content for m in sent.messages[1:-1] if m.role == "user"]
        assert users == shared + own  # shared first, the request's nearest right before it
    prefixes = {tuple(m.content for m in s.messages[:7]) for s in provider.sent}
    assert len(prefixes) == 1  # one prompt prefix for the engine's cache to keep


def test_a_whitelist_prompt_gets_no_shared_examples() -> None:
    settings = Settings.model_validate(
        {
            "generation": {"shared_examples": 5, "few_shot": 1, "review": 1},
            "validation": {"enabled": False},
            "default_prompt": {"tools": [{"name": "sort"}]},
        }
    )
    provider = ScriptedProvider.of("sort -h sizes.txt")
    pipeline = Pipeline(provider, settings, PLATFORM, UNSAFE, None, Path("/nonexistent"), None)
    pipeline.propose(RequestContext(request="sort sizes.txt by size"))
    users = [m.content for m in provider.sent[0].messages[1:-1] if m.role == "user"]
    assert len(users) <= 1  # the request's own nearest sort example at most


def test_a_write_command_that_left_every_file_as_it_was_is_repaired() -> None:
    unchanged, fixed = "sed -i 's/^port=8080$/port=9090/' app.ini", "sed -i 's/8080/9090/' app.ini"

    def runner(command: str) -> DryRun:
        changes = ("changed app.ini",) if command == fixed else ()
        return DryRun(command, 0, b"", "", scratch=True, changes=changes)

    provider = ScriptedProvider.of(unchanged, fixed)
    proposal = run_propose(provider, runner, request="set the port in app.ini to 9090")
    assert proposal.command == fixed  # type: ignore[attr-defined]
    repair = provider.sent[1].messages[-1].content
    assert "left every file as it was" in repair
    outcomes = [t["outcome"] for t in proposal.trials_json()]  # type: ignore[attr-defined]
    assert outcomes == ["mismatch", "ok"]


def test_a_count_written_with_the_file_name_is_repaired_when_the_number_alone_was_asked() -> None:
    named, alone = "wc -l poem.txt > out.txt", "wc -l < poem.txt > out.txt"

    def runner(command: str) -> DryRun:
        text = b"7 poem.txt\n" if command == named else b"7\n"
        return DryRun(
            command,
            0,
            b"",
            "",
            scratch=True,
            changes=("created out.txt",),
            written=(("out.txt", text),),
        )

    provider = ScriptedProvider.of(named, alone)
    request = "write only the number of lines of poem.txt to out.txt"
    proposal = run_propose(provider, runner, request=request)
    assert proposal.command == alone  # type: ignore[attr-defined]
    assert "out.txt holds '7 poem.txt'" in provider.sent[1].messages[-1].content


def test_a_printf_format_printed_as_it_stands_is_repaired() -> None:
    printed = """awk '{s += $1} END {print "%.2f", s / NR}' n.txt"""
    formatted = """awk '{s += $1} END {printf "%.2f\\n", s / NR}' n.txt"""
    provider = ScriptedProvider.of(printed, formatted)
    runner = TableRunner({printed: (0, "%.2f 2.5\n", ""), formatted: (0, "2.50\n", "")})
    proposal = run_propose(provider, runner, request="the average of the numbers in n.txt")
    assert proposal.command == formatted  # type: ignore[attr-defined]
    assert "printf" in provider.sent[1].messages[-1].content


def test_what_a_write_left_is_held_to_the_request_only_where_it_shows_a_miss() -> None:
    from conch.command.judge import format_literal, written_mismatch

    # An in-place edit that changed nothing missed; chmod or mkdir -p may find it done.
    assert written_mismatch("set a to 2 in x.ini", "sed -i 's/a=1/a=2/' x.ini", (), ()) == (
        "left every file as it was"
    )
    assert written_mismatch("make run.sh executable", "chmod +x run.sh", (), ()) is None
    assert written_mismatch("make the dir out", "mkdir -p out", (), ()) is None
    # A format is judged only inside a print or echo string.
    assert format_literal("""awk '{print "%d", $1}' n""", "%d 4") is not None
    assert format_literal("grep -n '%s' app.py", "3: x = '%s' % y") is None
    assert format_literal("sed -i 's/{}/%s/g' t.py", "%s") is None
    assert format_literal("""printf '%s\\n' a""", "%s") is None
