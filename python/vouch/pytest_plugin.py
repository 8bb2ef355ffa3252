"""pytest plugin: the `vouch_region` fixture is vouch.region (a no-op outside a vouch leg).

    def test_decode(vouch_region):
        with vouch_region("decode_step"):
            step()
"""

import pytest

import vouch


@pytest.fixture
def vouch_region():
    return vouch.region
