"""The measuring tools in tools/ that need no training environment."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.scripts import load_script


def _load(name: str) -> ModuleType:
    return load_script("tools", name)


def test_the_audit_turns_each_rule_off_and_counts_what_changes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Scene 9 of `companion bench vision --seed 900 --dice-touching`: looking beside a
    lone die finds the "3" touching the "4" (tests/vision/test_table_dice.py pins it),
    so with that rule off the audit counts one die right fewer and one missed more,
    one roll asked again; the same table comes back from the saved verdicts."""
    audit = _load("audit_table_rules")
    out = tmp_path / "audit.jsonl"
    records = audit.audit(900, 10, "touching", out)
    scene = records[9]
    assert scene["all"]["dice"] == ["right", "right"]
    assert scene["neighbour_probe"]["dice"][1] == "missed"
    table = audit.summary(records).splitlines()
    probe = next(line.split() for line in table if line.startswith("neighbour_probe"))
    base = next(line.split() for line in table if line.startswith("all rules on"))
    assert int(base[3]) == sum(r["all"]["dice"].count("right") for r in records)
    right, missed, again = int(probe[1]), int(probe[4]), int(probe[10])
    assert right <= -1 and missed >= 1 and again >= 1, probe
    assert [json.loads(line) for line in out.read_text().splitlines()] == records
    assert audit.main(["--summary", str(out)]) == 0
    assert capsys.readouterr().out.strip() == audit.summary(records)


def test_the_renderer_develops_a_flat_tray_to_its_exposure_and_blurs_without_loss() -> None:
    """`tools/render_dice_pbr.py` without Blender: a clean development exposes the
    tray's median to sRGB 0.75 whatever the light's strength, and its blur keeps a
    flat image flat and an impulse's total."""
    render = _load("render_dice_pbr")
    rng = np.random.default_rng(0)
    for strength in (0.02, 0.3, 4.0):
        lin = np.full((16, 16, 3), strength, np.float32)
        out = render.develop(lin, rng, clean=True)
        assert out.dtype == np.uint8 and out.shape == (16, 16, 3)
        assert abs(int(np.median(out)) - 191) <= 1, (strength, np.median(out))
    flat = np.full((9, 9, 3), 0.4)
    assert np.allclose(render.gaussian_blur(flat, 1.2), 0.4)
    impulse = np.zeros((21, 21, 1))
    impulse[10, 10] = 1.0
    blurred = render.gaussian_blur(impulse, 1.5)
    assert abs(blurred.sum() - 1.0) < 1e-9 and blurred.max() < 0.2
    assert blurred[10, 10] == blurred.max()


def _render_like_scene(path: Path) -> None:
    """A 256 px picture of two clean white dice, a "5" and a "3", in the renderer's
    layout, labelled: the "5" right (opaque), the "3" boxed as a "4" (marbled) and a
    marbled "2" where no die lies."""
    import cv2

    from vision.dice.synth import draw_die

    img = np.full((256, 256, 3), 200, np.uint8)
    rng = np.random.default_rng(3)
    for x, v in ((70.0, 5), (180.0, 3)):
        draw_die(img, rng, x, 128.0, 56.0, v, angle=8.0, body=(235, 235, 235), pip=(20, 20, 20),
                 shadow=False)
    cv2.imwrite(str(path.with_suffix(".png")), img)
    dice = [{"value": 5, "box": [40, 98, 100, 158], "center": [70, 128], "kind": "opaque"},
            {"value": 4, "box": [150, 98, 210, 158], "center": [180, 128], "kind": "marbled"},
            {"value": 2, "box": [100, 10, 150, 60], "center": [125, 35], "kind": "marbled"}]
    path.write_text(json.dumps(dice))


def test_the_render_reader_counts_each_body_kind_as_the_dice_bench_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    renders = _load("eval_dice_renders")
    _render_like_scene(tmp_path / "scene_00000.json")
    assert renders.main([str(tmp_path), "--json"]) == 0
    rows = {r["kind"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["opaque"] == {"kind": "opaque", "dice": 1, "right": 1, "wrong": 0, "unread": 0,
                              "missed": 0, "false": 0}
    assert (rows["marbled"]["dice"], rows["marbled"]["wrong"], rows["marbled"]["missed"]) == (2, 1, 1)
    assert rows["(none)"]["false"] == 0 and rows["all"]["dice"] == 3 and rows["all"]["right"] == 1


def test_the_render_reader_refuses_what_is_not_a_scene(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    renders = _load("eval_dice_renders")
    assert renders.main([str(tmp_path)]) == 2  # no scenes: said, not an empty table
    assert "no scene_*.json" in capsys.readouterr().err
    bad = tmp_path / "scene_00001.json"
    bad.write_text('[{"value": 3}]')  # no box
    with pytest.raises(ValueError, match="scene_00001.json: not a scene"):
        renders.scene_dice(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a scene"):
        renders.scene_dice(bad)
    assert renders.main([str(tmp_path)]) == 2  # the whole run stops on it, saying which file
    assert "scene_00001.json: not a scene" in capsys.readouterr().err
    (tmp_path / "scene_00002.json").write_text("[]")
    (tmp_path / "scene_00002.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match="not a readable image"):
        renders.tally_scene(renders.DiceReader(), tmp_path / "scene_00002.png", {})
