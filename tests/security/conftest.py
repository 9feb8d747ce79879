"""Security tests: attacks on the engine through `scalelabs grade` and `scalelabs grade-batch`,
each with an honest classmate whose score must not move. Helpers live in attack.py."""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent / "engine")]
