"""Run the client's tests and print one JSON line per test on stdout (for test/bridges-dcc.test.ts):

    python3 bridges/dcc/tests/run.py        # RESULT {"test": ..., "status": "ok" | "fail" | "error" | "skip", "detail": ...}

unittest's own report goes to stderr; the exit status is 1 when any test did not pass.
"""

from __future__ import annotations

import json
import sys
import time
import unittest
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


_started: dict = {}


def emit(test: unittest.TestCase, status: str, detail: str = "") -> None:
    doc = " ".join((getattr(test, "_testMethodDoc", None) or "").split())
    seconds = round(time.monotonic() - _started.pop(test.id(), time.monotonic()), 3)
    line = {"test": test.id(), "status": status, "doc": doc, "detail": detail, "seconds": seconds}
    print("RESULT " + json.dumps(line), flush=True)


class JsonResult(unittest.TextTestResult):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._failed_subtests: dict = {}

    def startTest(self, test: unittest.TestCase) -> None:
        _started[test.id()] = time.monotonic()
        super().startTest(test)

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        if test.id() in self._failed_subtests:
            emit(test, "fail", self._failed_subtests.pop(test.id()))
        else:
            emit(test, "ok")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        emit(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test: Any, err: Any) -> None:
        super().addError(test, err)
        emit(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        emit(test, "skip", reason)

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Optional[Any]) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            text = f"{subtest.id()}: {self._exc_info_to_string(err, test)}"
            self._failed_subtests[test.id()] = self._failed_subtests.get(test.id(), "") + text


def main() -> int:
    suite = unittest.defaultTestLoader.discover(str(HERE), pattern="test_*.py", top_level_dir=str(HERE))
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=JsonResult)
    result = runner.run(suite)
    return 0 if result.wasSuccessful() and not result.skipped else 1


if __name__ == "__main__":
    sys.exit(main())
