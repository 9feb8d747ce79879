"""Engine tests: a test-only assignment (toy.py) and a factory for submissions in tmp_path."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import toy  # noqa: E402



@pytest.fixture
def submit(tmp_path):
    """submit(module_source, answer=None, name="student") -> a submission folder."""
    def make(module_source, answer=None, name="student", answer_source=None):
        return toy.make_submission(tmp_path / name, module_source, answer, answer_source)
    return make
