"""Bad input to the dice reader and the `companion dice` command: clear errors, no crash."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from vision.dice import DiceReader, DieReading, read_dice
from vision.dice.synth import draw_die
from vision.image_file import read_image


def _die_image(value: int = 5, size: float = 60) -> np.ndarray:
    img = np.full((480, 640, 3), (170, 200, 225), np.uint8)
    draw_die(img, np.random.default_rng(0), 320, 240, size, value, angle=10,
             body=(235, 240, 240), pip=(20, 20, 20))
    return img


def test_zero_size_frame_gives_no_dice() -> None:
    assert read_dice(np.zeros((0, 0, 3), np.uint8)) == []
    assert read_dice(np.zeros((0, 640, 3), np.uint8)) == []
    assert read_dice(np.zeros((5, 5, 3), np.uint8)) == []


def test_uniform_frames_give_no_dice() -> None:
    for v in (0, 128, 255):
        assert read_dice(np.full((480, 640, 3), v, np.uint8)) == []
    assert read_dice(np.full((480, 640), 128, np.uint8)) == []


def test_grey_and_bgra_frames_are_read() -> None:
    img = _die_image(5)
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    bgra = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    for frame in (grey, bgra, img.astype(np.float32) / 255.0):
        dice = read_dice(frame)
        assert len(dice) == 1
        assert dice[0].value in (5, None)


def test_not_an_image_raises_value_error() -> None:
    with pytest.raises(ValueError):
        read_dice("frame.jpg")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        read_dice(np.zeros((4, 4, 4, 4), np.uint8))


def test_roi_offsets_and_clipping() -> None:
    img = _die_image(3)
    full = read_dice(img)
    assert len(full) == 1
    part = read_dice(img, roi=(200, 100, 300, 300))
    assert len(part) == 1
    assert abs(part[0].center[0] - full[0].center[0]) < 4
    assert abs(part[0].center[1] - full[0].center[1]) < 4
    assert read_dice(img, roi=(0, 0, 100, 100)) == []
    assert read_dice(img, roi=(5000, 5000, 10, 10)) == []
    assert len(read_dice(img, roi=(-50, -50, 2000, 2000))) == 1


def test_reading_is_frozen_and_typed() -> None:
    d = read_dice(_die_image(2))[0]
    assert isinstance(d, DieReading)
    with pytest.raises(AttributeError):
        d.value = 3  # type: ignore[misc]
    assert 0.0 <= d.confidence <= 1.0
    assert isinstance(d.center[0], float)


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        DiceReader(tmp_path / "nope.onnx")


def test_load_image_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    text = tmp_path / "text.jpg"
    text.write_text("not an image at all")
    for p, msg in ((empty, "empty"), (text, "not an image OpenCV can decode"),
                   (tmp_path / "missing.jpg", "no such file"), (tmp_path, "directory")):
        with pytest.raises(ValueError, match=msg):
            read_image(p)


def test_cli_dice_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.png"
    cv2.imwrite(str(good), _die_image(4))
    ok, jpg = cv2.imencode(".jpg", _die_image(6))
    assert ok
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(jpg.tobytes()[: len(jpg) // 3])
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"\x00\x01garbage" * 100)
    paths = [str(good), str(truncated), str(empty), str(junk), str(tmp_path / "missing.jpg"),
             str(good)]
    status = main(["dice", "--json", *paths])
    lines = capsys.readouterr().out.splitlines()
    assert status != 0  # some images failed
    assert len(lines) == len(paths)
    recs = [json.loads(line) for line in lines]
    assert [r["image"] for r in recs] == paths
    for r in recs:
        assert isinstance(r["dice"], list)
        assert isinstance(r["ms"], float)
    for r in (recs[0], recs[-1]):
        assert "error" not in r
        assert len(r["dice"]) == 1
        d = r["dice"][0]
        assert set(d) == {"value", "center", "confidence"}
        assert d["value"] in (4, None)
        assert len(d["center"]) == 2 and all(isinstance(v, float) for v in d["center"])
        assert abs(d["center"][0] - 320) < 15 and abs(d["center"][1] - 240) < 15
        assert 0.0 <= d["confidence"] <= 1.0
    for r in recs[1:5]:
        assert r["error"] and r["dice"] == []
    # OpenCV alone would decode the first third and read no die there: refused instead
    assert recs[1]["error"] == "truncated JPEG: the file ends before the image does"


def test_cli_dice_roi_and_die_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--roi`` reads only that region (centres stay in full-image pixels); ``--die-px``
    gives the dice's size; bad values are refused with a clear message."""
    img = np.full((480, 640, 3), (170, 200, 225), np.uint8)
    draw_die(img, np.random.default_rng(0), 120, 100, 16, 3, angle=10,
             body=(235, 240, 240), pip=(20, 20, 20))
    draw_die(img, np.random.default_rng(1), 500, 380, 16, 6, angle=30,
             body=(235, 240, 240), pip=(20, 20, 20))
    path = tmp_path / "small.png"
    cv2.imwrite(str(path), img)
    assert main(["dice", "--json", "--roi", "40,20,200,160", "--die-px", "16", str(path)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert len(rec["dice"]) == 1
    d = rec["dice"][0]
    assert d["value"] in (3, None)
    assert abs(d["center"][0] - 120) < 8 and abs(d["center"][1] - 100) < 8
    for args, msg in ((["--roi", "1,2,3"], "--roi wants X,Y,W,H"),
                      (["--roi", "0,0,0,10"], "must be > 0"),
                      (["--die-px", "-4"], "--die-px must be a positive")):
        assert main(["dice", *args, str(path)]) == 2
        assert msg in capsys.readouterr().err


def test_cli_dice_all_good_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.png"
    cv2.imwrite(str(good), _die_image(1))
    assert main(["dice", str(good)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(str(good)) and out.count("\n") == 1


def test_cli_bench_dice_on_synthetic_set(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from vision.dice.synth import scene

    set_dir = tmp_path / "synthset"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    rng = np.random.default_rng(5)
    for i in range(3):
        img, dice = scene(rng, 480, 640, n_dice=3, size_range=(40, 60), unreadable_rate=0.0)
        cv2.imwrite(str(set_dir / "images" / f"s{i}.jpg"), img)
        lines = [f"{d.value - 1} {d.cx / 640:.5f} {d.cy / 480:.5f} {d.size / 640:.5f} "
                 f"{d.size / 480:.5f}" for d in dice]
        (set_dir / "labels" / f"s{i}.txt").write_text("\n".join(lines) + "\n")
    assert main(["bench", "dice", "--data", str(tmp_path), "--split", "all", "--json"]) == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(recs) == 2
    assert recs[0]["name"] == "synthset (all)" and recs[0]["images"] == 3
    assert recs[0]["right"] + recs[0]["wrong"] + recs[0]["unread"] == recs[0]["found"]
    # how fast the host was meanwhile: the main pass on a fixed frame after each image
    assert all(r["host_main_pass_ms"] > 0 for r in recs)
    assert main(["bench", "dice", "--data", str(tmp_path), "--split", "all"]) == 0
    human = capsys.readouterr().out.splitlines()
    assert len(human) == 2 and all(" ms/image (host main pass " in h for h in human), human
    assert main(["bench", "dice", "--data", str(tmp_path / "nothing")]) == 2
    # as many OpenCV threads as asked (a Pi 4 has 4 cores), the same readings
    try:
        assert main(["bench", "dice", "--data", str(tmp_path), "--split", "all", "--json",
                     "--threads", "2"]) == 0
        assert cv2.getNumThreads() == 2
    finally:
        cv2.setNumThreads(1)
    two = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    def counts(r: dict[str, object]) -> dict[str, object]:
        return {k: v for k, v in r.items() if not k.startswith(("ms", "host"))}
    assert [counts(r) for r in two] == [counts(r) for r in recs]
    assert main(["bench", "dice", "--data", str(tmp_path), "--threads", "0"]) == 2


def test_cli_bench_dice_skips_and_names_bad_images_and_labels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_dir = tmp_path / "mixed"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    cv2.imwrite(str(set_dir / "images" / "good.png"), _die_image(4))
    (set_dir / "labels" / "good.txt").write_text("3 0.5 0.5 0.2 0.2\n")
    (set_dir / "images" / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    cv2.imwrite(str(set_dir / "images" / "mislabelled.png"), _die_image(2))
    (set_dir / "labels" / "mislabelled.txt").write_text("7 0.5 0.5 0.2 0.2\n")
    assert main(["bench", "dice", "--data", str(tmp_path), "--split", "all", "--json"]) == 1
    cap = capsys.readouterr()
    rec = json.loads(cap.out.splitlines()[0])
    assert rec["images"] == 1 and rec["dice"] == 1 and rec["skipped"] == 2
    assert "broken.jpg: not an image" in cap.err
    assert "mislabelled.txt:1: class must be 0..5" in cap.err


def _with_exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """A JPEG with a minimal EXIF block (APP1) that holds only the orientation tag."""
    tiff = (b"MM\x00\x2a\x00\x00\x00\x08"  # big-endian TIFF header, first IFD at 8
            + (1).to_bytes(2, "big")  # one entry: 0x0112 Orientation, SHORT, count 1
            + b"\x01\x12\x00\x03\x00\x00\x00\x01" + orientation.to_bytes(2, "big") + b"\x00\x00"
            + b"\x00\x00\x00\x00")  # no next IFD
    body = b"Exif\x00\x00" + tiff
    app1 = b"\xff\xe1" + (len(body) + 2).to_bytes(2, "big") + body
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + app1 + jpeg[2:]


def test_exif_orientation_is_applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A phone photo stored sideways with EXIF orientation 6 ("rotate 90 degrees clockwise
    to show") is read upright: the image's shape and the die's centre are those of the
    upright picture."""
    upright = np.full((480, 640, 3), (170, 200, 225), np.uint8)
    draw_die(upright, np.random.default_rng(0), 160, 130, 60, 5, angle=30,
             body=(235, 240, 240), pip=(20, 20, 20))
    stored = cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE)  # 640 high, 480 wide
    ok, jpg = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    path = tmp_path / "sideways.jpg"
    path.write_bytes(_with_exif_orientation(jpg.tobytes(), 6))
    assert read_image(path).shape == upright.shape
    assert main(["dice", "--json", str(path)]) == 0
    dice = json.loads(capsys.readouterr().out)["dice"]
    assert len(dice) == 1 and dice[0]["value"] == 5, dice
    cx, cy = dice[0]["center"]
    assert abs(cx - 160) < 10 and abs(cy - 130) < 10, dice


def test_bench_resize_keeps_dice_square_and_labels_on_them(tmp_path: Path) -> None:
    """``bench dice --resize``: a square photo in a 4:3 frame is scaled the same in x
    and y and centred; its labels follow, so the dice are still found where labelled."""
    from vision.dice.run import bench_set, fit_frame

    img = np.full((300, 300, 3), (170, 200, 225), np.uint8)
    draw_die(img, np.random.default_rng(0), 100, 150, 40, 5, angle=10,
             body=(235, 240, 240), pip=(20, 20, 20))
    frame, k, ox, oy = fit_frame(img, (800, 600))
    assert frame.shape == (600, 800, 3) and k == 2.0 and (ox, oy) == (100, 0)
    assert (frame[:, :100] == (170, 200, 225)).all()  # the border: the photo's median colour
    set_dir = tmp_path / "sq"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    cv2.imwrite(str(set_dir / "images" / "a.png"), img)
    (set_dir / "labels" / "a.txt").write_text(f"4 {100 / 300} 0.5 {40 / 300} {40 / 300}\n")
    for size in (None, (800, 600), (1000, 500)):
        for known in (False, True):
            score = bench_set(set_dir, "all", DiceReader(), size, known_size=known)
            assert (score.images, score.dice, score.right, score.false) == (1, 1, 1, 0), size


def test_bench_known_size_tells_the_reader_the_labelled_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    set_dir = tmp_path / "sq"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    cv2.imwrite(str(set_dir / "images" / "a.png"), _die_image(5))
    (set_dir / "labels" / "a.txt").write_text("4 0.5 0.5 0.09 0.12\n2 0.2 0.2 0.1 0.1\n"
                                              "1 0.7 0.7 0.2 0.2\n")
    seen: list[float | None] = []
    real_read = DiceReader.read

    def spy(self: DiceReader, frame: np.ndarray, roi: object = None, *,
            die_px: float | None = None, **kw: object) -> list[DieReading]:
        seen.append(die_px)
        return real_read(self, frame, roi, die_px=die_px, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(DiceReader, "read", spy)
    assert main(["bench", "dice", "--data", str(tmp_path), "--split", "all", "--json",
                 "--known-size"]) == 0
    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["name"] == "sq (all, known die size)"
    assert seen[-1] == pytest.approx(64.0)  # the boxes' longer sides: 57.6, 64, 128 px


def test_noise_never_reads_as_a_number() -> None:
    """A broken or dark frame full of noise: pips appear in it, so no value is given
    (without the noise check, 20 uniform-noise frames gave 6 numbers)."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        for frame in (rng.integers(0, 256, (480, 640, 3), dtype=np.uint8),
                      np.clip(128 + rng.normal(0, 40, (480, 640, 3)), 0, 255).astype(np.uint8)):
            assert all(d.value is None for d in read_dice(frame))
    clean = _die_image(3)
    assert [d.value for d in read_dice(clean)] == [3]
    noisy = np.clip(clean + rng.normal(0, 25, clean.shape), 0, 255).astype(np.uint8)
    assert all(d.value is None for d in read_dice(noisy))


def test_defocused_die_is_not_given_a_number() -> None:
    """A 38 px die blurred past its pips' edges (sigma 4 px: a camera out of focus) is
    reported without a value, if at all; in focus, and still at sigma 2, it is read."""
    for value in range(1, 7):
        img = _die_image(value, 38)
        assert [d.value for d in read_dice(img)] == [value]
        assert [d.value for d in read_dice(cv2.GaussianBlur(img, (0, 0), 2.0))] == [value]
        assert all(d.value is None for d in read_dice(cv2.GaussianBlur(img, (0, 0), 4.0)))


def test_bench_die_px_shrinks_the_dice_and_reads_them_as_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``bench dice --die-px N``: each photo shrunk so its median labelled die is N px
    (never enlarged), labels following, and read told that size with all dice one set,
    as ``read_table_dice`` reads the dice area."""
    set_dir = tmp_path / "sq"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    cv2.imwrite(str(set_dir / "images" / "a.png"), _die_image(5, 60))  # a 60 px die
    (set_dir / "labels" / "a.txt").write_text(f"4 0.5 0.5 {60 / 640} {60 / 480}\n")
    calls: list[tuple[tuple[int, ...], float | None, object]] = []
    real_read = DiceReader.read

    def spy(self: DiceReader, frame: np.ndarray, roi: object = None, *,
            die_px: float | None = None, **kw: object) -> list[DieReading]:
        calls.append((frame.shape, die_px, kw.get("one_size")))
        return real_read(self, frame, roi, die_px=die_px, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(DiceReader, "read", spy)
    for die_to, shape, told in ((30, (240, 320, 3), 30.0), (100, (480, 640, 3), 60.0)):
        assert main(["bench", "dice", "--data", str(tmp_path), "--split", "all", "--json",
                     "--die-px", str(die_to)]) == 0
        rec = json.loads(capsys.readouterr().out.splitlines()[0])
        assert rec["name"] == f"sq (all, dice shrunk to {die_to} px, read as the table)"
        assert (rec["right"], rec["wrong"], rec["false"]) == (1, 0, 0), rec
        frame_shape, die_px, one_size = calls[-1]
        assert frame_shape == shape and one_size is True
        assert die_px == pytest.approx(told)
    assert main(["bench", "dice", "--data", str(tmp_path), "--die-px", "20",
                 "--resize", "2028x1520"]) == 2
    assert main(["bench", "dice", "--data", str(tmp_path), "--die-px", "2"]) == 2
    assert "--die-px" in capsys.readouterr().err
