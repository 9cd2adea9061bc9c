"""StageTimer: each lap charges the time since the previous one to its stage."""

from __future__ import annotations

import time

from hoodie_datasource.write.stage_timer import StageTimer


def test_laps_charge_their_own_stage_and_add_up():
    recorded = {"keys": 1.0}
    timer = StageTimer(recorded)
    time.sleep(0.02)
    timer.lap("tag")
    timer.lap("profile")
    time.sleep(0.03)
    timer.lap("tag")
    assert recorded is timer.seconds and set(recorded) == {"keys", "tag", "profile"}
    assert recorded["keys"] == 1.0  # a stage of an earlier timer is left as it was
    assert 0.05 <= recorded["tag"] < 0.5 and recorded["profile"] < 0.02
    assert timer.ms("tag") == int(recorded["tag"] * 1000) and timer.ms("write") == 0
