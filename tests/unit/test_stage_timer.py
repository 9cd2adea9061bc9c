"""StageTimer: each lap charges the time since the previous one to its stage (on a clock the test
drives, so nothing depends on how busy the machine is)."""

from __future__ import annotations

from hoodie_datasource.write import stage_timer
from hoodie_datasource.write.stage_timer import StageTimer


class SteppedClock:
    """``time`` as stage_timer sees it: ``monotonic()`` reads a value the test advances."""

    def __init__(self):
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


def test_laps_charge_their_own_stage_and_add_up(monkeypatch):
    clock = SteppedClock()
    monkeypatch.setattr(stage_timer, "time", clock)
    recorded = {"keys": 1.0}
    timer = StageTimer(recorded)
    clock.now += 0.25
    timer.lap("tag")
    timer.lap("profile")  # nothing elapsed since the previous lap
    clock.now += 0.5
    timer.lap("tag")
    clock.now += 2.0
    timer.lap("write")
    assert recorded is timer.seconds and set(recorded) == {"keys", "tag", "profile", "write"}
    assert recorded["keys"] == 1.0  # a stage of an earlier timer is left as it was
    assert (recorded["tag"], recorded["profile"], recorded["write"]) == (0.75, 0.0, 2.0)
    assert (timer.ms("tag"), timer.ms("write"), timer.ms("clean")) == (750, 2000, 0)


def test_a_second_timer_adds_to_the_stages_it_is_given(monkeypatch):
    clock = SteppedClock()
    monkeypatch.setattr(stage_timer, "time", clock)
    first = StageTimer()
    clock.now += 1.5
    first.lap("tag")
    second = StageTimer(first.seconds)  # starts its own clock now
    clock.now += 0.5
    second.lap("tag")
    assert first.seconds == {"tag": 2.0} and second.ms("tag") == 2000
