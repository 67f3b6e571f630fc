"""CrashLibrary's checks: what the emulator holds (and its faults), what the clients answered, and what the
ledger shows after a crash."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from collections import Counter
from typing import Any

import httpx
from robot.api import logger
from robot.api.deco import keyword

from _crash_providers import _OUTSTANDING, _PROVIDERS, REPLY
from _crash_state import CrashState, _answers, _Client, _few, _keys, _natural, _opened, _short, _status_report, _tail
from _custom_ids import key_of, keys_created
from lowtide.batching.engine.collecting import RESULTS_PER_TRANSACTION
from lowtide.ledger.records import COPIED


class CrashChecks(CrashState):
    """The keywords that read the emulator, the clients' outputs and the ledger (no process is started here)."""

    # ------------------------------------------------------------------------------------------ the emulator

    @keyword("Arm Fault")
    def arm_fault(
        self, route: str, kind: str, seconds: float | None = None, times: int = 1, status: int | None = None
    ) -> None:
        """`POST /_emulator/faults {"route", "kind", "seconds", "times"}`: e.g. `batches.create`
        `delay_after_commit` (commit, then answer `seconds` later) or `drop_after_commit` (commit, then drop the
        connection without an answer)."""
        body: dict[str, Any] = {"route": route, "kind": kind, "times": times}
        if seconds is not None:
            body["seconds"] = seconds
        if status is not None:
            body["status"] = status
        response = httpx.post(self._require_base_url() + "/_emulator/faults", json=body, timeout=10.0)
        if response.status_code >= 400:
            raise AssertionError(
                f"The emulator refused the fault {body}: {response.status_code} {response.text}\n"
                f"(Does this emulator have the `{kind}` fault kind yet?)"
            )
        logger.info(f"Armed fault {body}: {response.text}")

    @keyword("Reset Emulator")
    def reset_emulator(self) -> None:
        """Forget every batch, call count and fault: the emulator as freshly started."""
        httpx.post(self._require_base_url() + "/_emulator/reset", timeout=10.0).raise_for_status()

    @keyword("Emulator Stats")
    def emulator_stats(self) -> dict[str, Any]:
        response = httpx.get(self._require_base_url() + "/_emulator/stats", timeout=10.0)
        response.raise_for_status()
        stats: dict[str, Any] = response.json()
        logger.info(f"Emulator stats: {_short(stats)}")
        return stats

    @keyword("Emulator Call Count Should Be")
    def emulator_call_count_should_be(self, route: str, expected: int) -> None:
        """How many calls of `route` (`batches.create`, ...) the emulator served, failed or refused ones included."""
        calls = int(self.emulator_stats().get("calls", {}).get(route, 0))
        if calls != expected:
            raise AssertionError(f"The emulator served {calls} call(s) of {route}, expected {expected}.")

    @keyword("Wait Until The Emulator Holds Batches")
    def wait_until_the_emulator_holds_batches(self, count: int, timeout: float = 120.0) -> None:
        """Wait until the emulator has committed `count` batches (a client's create went through)."""
        stat = _PROVIDERS[self._provider].batches_stat
        deadline = time.monotonic() + timeout
        while int(self.emulator_stats().get(stat, 0)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"The emulator held fewer than {count} batch(es) after {timeout:g} s.")
            time.sleep(0.1)

    @keyword("Emulator Should Hold Batches")
    def emulator_should_hold_batches(self, expected: int) -> None:
        """How many batches the emulator has committed, whether or not their creator heard back."""
        batches = int(self.emulator_stats().get(_PROVIDERS[self._provider].batches_stat, -1))
        if batches != expected:
            raise AssertionError(f"The emulator holds {batches} batch(es), expected {expected}.")

    @keyword("Every Request Should Have Been Created Once")
    def every_request_should_have_been_created_once(self, prefix: str, requests: int, *more: str) -> None:
        """No request paid twice: the emulator's batches hold `PREFIX-1` .. `PREFIX-N` exactly once each.

        First from the API's own list of batches (their request counts add up to N), then from the emulator's
        `created_custom_ids` (how many committed batches held each custom id), which must be 1 for every one.
        """
        expected = _keys(prefix, requests, more)
        requests = len(expected)
        listed = self._list_batches()
        size = _PROVIDERS[self._provider].size
        total = sum(size(batch) for batch in listed) if size is not None else requests
        label = _PROVIDERS[self._provider].label
        summary = ", ".join(f"{label(b)}, {size(b) if size is not None else '?'})" for b in listed)
        logger.info(f"The API lists {len(listed)} batch(es): {summary}")
        if total != requests:
            raise AssertionError(
                f"The API's batches hold {total} request(s) in all, expected {requests} (each request once): {summary}"
            )
        stats = self.emulator_stats()
        created = stats.get(_PROVIDERS[self._provider].created_stat)
        if not isinstance(created, dict):
            raise AssertionError(
                "The emulator's stats have no `created_custom_ids`, so exactly one create per request cannot be "
                f"proven from it (the API's list of batches does hold {total} request(s) for {requests}). "
                f"Stats: {_short(stats)}"
            )
        counts = dict(keys_created(created))  # by key: each custom id is its key and the ledger's identity
        missing = sorted(expected - set(counts), key=_natural)
        twice = {k: v for k, v in sorted(counts.items(), key=lambda kv: _natural(kv[0])) if v != 1}
        strangers = sorted(set(counts) - expected, key=_natural)
        problems = []
        if missing:
            problems.append(f"{len(missing)} never created: {_few(missing)}")
        if twice:
            problems.append(f"{len(twice)} not created exactly once: {_few([f'{k}={v}' for k, v in twice.items()])}")
        if strangers:
            problems.append(f"{len(strangers)} unexpected custom ids: {_few(strangers)}")
        if problems:
            raise AssertionError("created_custom_ids: " + "; ".join(problems))

    # ---------------------------------------------------------------------------------------- answers, ledger

    @keyword("Answers Should Be Complete")
    def answers_should_be_complete(
        self, name: str, prefix: str, requests: int, *more: str
    ) -> dict[str, dict[str, Any]]:
        """The client's output answers `PREFIX-1` .. `PREFIX-N` once each, each with the emulator's reply to its
        own question, its own custom id and a batch id; returns the lines by key."""
        client = self._client(name)
        lines = _answers(client)
        keys = Counter(str(line.get("key")) for line in lines)
        expected = sorted(_keys(prefix, requests, more), key=_natural)
        problems: list[str] = []
        repeated = sorted((k for k, n in keys.items() if n > 1), key=_natural)
        if repeated:
            problems.append(f"answered more than once: {_few(repeated)}")
        missing = [k for k in expected if k not in keys]
        if missing:
            problems.append(f"{len(missing)} not answered: {_few(missing)}")
        unexpected = sorted(set(keys) - set(expected), key=_natural)
        if unexpected:
            problems.append(f"unexpected keys: {_few(unexpected)}")
        by_key = {str(line.get("key")): line for line in lines}
        wrong: list[str] = []
        for key in expected:
            index = int(key.rsplit("-", 1)[1])
            line = by_key.get(key)
            if line is None:
                continue
            text, batch_id = str(line.get("text", "")), str(line.get("batch_id") or "")
            if "error" in line:
                wrong.append(f"{key}: {line['error']}: {line.get('message')}")
            elif not text.startswith(REPLY.format(index=index) + ":"):
                wrong.append(f"{key}: text {text!r}")
            elif key_of(str(line.get("custom_id"))) != key or not batch_id.startswith(
                _PROVIDERS[self._provider].batch_prefix
            ):
                wrong.append(f"{key}: custom id {line.get('custom_id')!r}, batch id {batch_id!r}")
        if wrong:
            problems.append(f"{len(wrong)} wrong answer(s): {_few(wrong)}")
        if problems:
            raise AssertionError(f"The answers of {name} are not complete: " + "; ".join(problems))
        batches = Counter(str(line["batch_id"]) for line in lines)
        logger.info(f"{name}: {len(lines)} answers from {len(batches)} batch(es): {dict(batches)}")
        return by_key

    @keyword("Answers Should Be The Same")
    def answers_should_be_the_same(self, first: str, second: str) -> None:
        """Both clients' outputs give every key the same text, custom id and batch id."""
        answers = []
        for name in (first, second):
            lines = _answers(self._client(name))
            fields = ("text", "custom_id", "batch_id")
            answers.append({line["key"]: tuple(line.get(f) for f in fields) for line in lines})
        if answers[0] != answers[1]:
            differ = sorted(
                (k for k in set(answers[0]) | set(answers[1]) if answers[0].get(k) != answers[1].get(k)), key=_natural
            )
            raise AssertionError(
                f"{first} and {second} differ on {len(differ)} key(s): "
                + _few([f"{k}: {answers[0].get(k)} vs {answers[1].get(k)}" for k in differ])
            )

    @keyword("Ledger Status")
    def ledger_status(self, ledger: str) -> dict[str, Any]:
        """`lowtide status --ledger LEDGER --json`, parsed."""
        result = subprocess.run(
            [*self._lowtide(), "status", "--ledger", ledger, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=self._environment({}),
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"lowtide status exited with {result.returncode}:\n{result.stderr}")
        report: dict[str, Any] = json.loads(result.stdout)
        tickets = Counter(t["state"] for t in report["tickets"])
        batches = [(b["id"], b["batch_id"], b["state"], b["requests"]) for b in report["batches"]]
        logger.info(f"Ledger {ledger}: tickets {dict(tickets)}; batches (id, API id, state, requests) {batches}")
        return report

    @keyword("Every Ticket Should Be Collected")
    def every_ticket_should_be_collected(self, ledger: str, prefix: str, requests: int) -> None:
        """`lowtide status --json`'s report lists exactly `PREFIX-1` .. `PREFIX-N`, every one `collected`.

        The report is made in this process (`_status_report`), as `Ledger Should Show A Crash At` makes it: the
        command's start-up would cost a test more than the check."""
        report = _status_report(ledger)
        states = {t["key"]: t["state"] for t in report["tickets"]}
        expected = {f"{prefix}-{i}" for i in range(1, requests + 1)}
        problems = []
        if set(states) != expected:
            problems.append(
                f"keys missing {_few(sorted(expected - set(states), key=_natural))}, "
                f"unexpected {_few(sorted(set(states) - expected, key=_natural))}"
            )
        other = {k: s for k, s in states.items() if s != "collected"}
        if other:
            problems.append(f"{len(other)} not collected: {_few([f'{k}={s}' for k, s in sorted(other.items())])}")
        if problems:
            raise AssertionError(f"Ledger {ledger}: " + "; ".join(problems))

    @keyword("Every Batch Should Be Collected")
    def every_batch_should_be_collected(self, ledger: str) -> None:
        """`lowtide status --json`'s report lists no batch still outstanding: one whose results were all stored
        before a crash was closed by the next program's calls, without being collected again."""
        report = _status_report(ledger)
        open_batches = [(b["id"], b["state"]) for b in report["batches"] if b["state"] in _OUTSTANDING]
        if open_batches:
            raise AssertionError(f"Ledger {ledger}: batches not collected: {open_batches}")

    @keyword("Every Result Should Be Stored Once")
    def every_result_should_be_stored_once(self, ledger: str) -> None:
        """No request has two results stored from one batch: a batch collected again after a crash (part of its
        results stored before it) stores only the results the ledger lacked."""
        opened = _opened(ledger)
        try:
            columns = COPIED["results"]
            batch, key = columns.index("batch_id"), columns.index("key")
            stored = Counter((row[batch], row[key]) for rows in opened.export_rows("results") for row in rows)
        finally:
            opened.close()
        twice = sorted(f"{k} in {b}: {n}" for (b, k), n in stored.items() if n > 1)
        logger.info(f"Ledger {ledger}: {sum(stored.values())} results, of {len(stored)} requests and batches")
        if twice:
            raise AssertionError(f"Ledger {ledger}: {len(twice)} result(s) stored more than once: {_few(twice)}")

    @keyword("Ledger Should Show A Crash At")
    def ledger_should_show_a_crash_at(self, ledger: str, stage: str, requests: int) -> None:
        """What the ledger holds right after a client died at `stage`: proof that it died where it was meant to.

        `after-intent`, `during-create`, `after-create`, `after-step-<step>` (a create step such as the uploaded input
        file recorded): one batch intent without the API's id, every request submitting. `while-polling`: the API's
        batch id recorded, every request waiting on it. `while-streaming`: the first chunk of results
        (`RESULTS_PER_TRANSACTION`, or all when fewer) stored, the batch not marked collected. `after-results`:
        every result stored, the batch not marked collected.
        """
        report = _status_report(ledger)
        states = Counter(t["state"] for t in report["tickets"])
        batches = report["batches"]
        logger.info(f"Ledger after the crash: tickets {dict(states)}; batches {batches}")
        stage = stage.partition(":")[0]
        problems: list[str] = []
        if sum(states.values()) != requests:
            problems.append(f"{sum(states.values())} tickets, expected {requests}")
        if len(batches) != 1:
            problems.append(f"{len(batches)} batches, expected 1")
        batch = batches[0] if batches else {}
        if stage in ("after-intent", "during-create", "after-create") or stage.startswith("after-step-"):
            if batch.get("state") != "intent" or batch.get("batch_id") is not None:
                problems.append(f"batch {batch}, expected an intent without the API's id")
            if states != Counter({"submitting": requests}):
                problems.append(f"ticket states {dict(states)}, expected all submitting")
        elif stage == "while-polling":
            prefix = _PROVIDERS[self._provider].batch_prefix
            if batch.get("state") != "waiting-on-batch" or not str(batch.get("batch_id")).startswith(prefix):
                problems.append(f"batch {batch}, expected waiting-on-batch with the API's id")
            if states != Counter({"waiting-on-batch": requests}):
                problems.append(f"ticket states {dict(states)}, expected all waiting-on-batch")
        elif stage == "after-results":
            if batch.get("state") != "ended":
                problems.append(f"batch {batch}, expected ended (every result stored, not said collected)")
            if states != Counter({"collected": requests}):
                problems.append(f"ticket states {dict(states)}, expected all collected")
        elif stage == "while-streaming":
            stored = min(RESULTS_PER_TRANSACTION, requests)
            if batch.get("state") != "ended":
                problems.append(f"batch {batch}, expected ended (results not all collected)")
            if states["collected"] != stored:
                problems.append(f"ticket states {dict(states)}, expected {stored} collected (one chunk)")
        else:
            raise AssertionError(f"Unknown crash stage {stage!r}.")
        if problems:
            raise AssertionError(f"After a crash at {stage}: " + "; ".join(problems))

    @keyword("Log Diagnostics")
    def log_diagnostics(self) -> None:
        """For a failed test: the emulator's stats, every client's exit code and log, and every ledger's rows."""
        if self._base_url is not None:
            try:
                stats = self.emulator_stats()
                logger.info(f"Emulator stats (full): {json.dumps(stats, sort_keys=True)}")
            except Exception as exc:
                logger.info(f"No emulator stats: {exc!r}")
        clients = [p for p in self._processes if isinstance(p, _Client)]
        for client in [*clients, *(self._clients[name] for name in self._ran_here)]:
            logger.info(
                f"{client.name} exit code {client.code} after {client.seconds:.2f} s\n"
                f"stdout:\n{client.stdout}\nstderr:\n{_tail(client.stderr, 60)}"
            )
        for ledger in self._ledgers:
            if not ledger.exists():
                continue
            with sqlite3.connect(ledger, timeout=10.0) as db:
                batches = db.execute(
                    "SELECT id, provider_batch_id, state, request_count, owner, note FROM batches ORDER BY intent_at"
                ).fetchall()
                requests = db.execute(
                    "SELECT state, batch_id, owner IS NOT NULL, attempts, COUNT(*) FROM request_view"
                    " GROUP BY state, batch_id, owner IS NOT NULL, attempts"
                ).fetchall()
            logger.info(
                f"Ledger {ledger}\nbatches (id, API id, state, requests, owner, note):\n"
                + "\n".join(map(str, batches))
                + "\nrequests (state, batch, owned, attempts, count):\n"
                + "\n".join(map(str, requests))
            )
