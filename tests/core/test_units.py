"""helpers.core.units: sizes as people type them (every benchmark CLI)."""
import pytest

from helpers.core import units


def test_binary_and_decimal_suffixes():
    assert units.parse_size("64K") == units.parse_size("64KiB") == 65536
    assert units.parse_size("1GB") == 10**9 and units.parse_size("1GiB") == 2**30
    assert units.parse_size(4096) == units.parse_size(" 4096 ") == 4096
    with pytest.raises(ValueError, match="64MiB"):
        units.parse_size("64 bananas")
