"""What the README says of ``Temporal`` holds: a warm run has V8's own, frozen, every
type but ``Temporal.Now`` (the run's clock is ``Date.now()``); a fresh context has it
whole. Both compute dates and durations alike."""

from __future__ import annotations

from tests.engine.conftest import EngineHarness, body_json

USE = """return {
  now: typeof Temporal.Now,
  frozen: Object.isFrozen(Temporal),
  date: Temporal.PlainDate.from('2024-02-28').add({ days: 2 }).toString(),
  minutes: Temporal.Duration.from({ hours: 1, minutes: 30 }).total('minutes'),
  zoned: typeof Temporal.Instant.fromEpochMilliseconds(Date.now())
    .toZonedDateTimeISO('Europe/Paris').toString(),
}"""


def test_a_warm_run_has_temporal_without_now(engine: EngineHarness) -> None:
    assert body_json(engine.run(USE)) == {
        "now": "undefined", "frozen": True, "date": "2024-03-01", "minutes": 90,
        "zoned": "string"}


def test_a_fresh_context_has_it_whole(engine: EngineHarness) -> None:
    out = body_json(engine.run(USE, isolation="fresh"))
    assert out["now"] == "object" and out["date"] == "2024-03-01" and out["minutes"] == 90
