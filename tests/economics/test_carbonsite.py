"""helpers.economics.carbonsite: grid intensity per site and per hour; published run emissions predicted from the
national average and from the site's own intensity (run with -s to see the errors)."""
import pytest

from helpers.economics import carbonsite as C


def test_site_intensity_reproduces_published_emissions():
    for r in C.check_national_average():
        print(f"\n{r['run']}: published {r['published_tCO2e']} t; national average "
              f"{r['national_gCO2_per_kWh']} g/kWh → {r['national_tCO2e']:.1f} t ({r['national_error']:+.1%}); "
              f"site → {r['site_tCO2e']:.1f} t ({r['site_error']:+.1%})")
        assert abs(r["site_error"]) < 0.01                  # energy × site intensity is the published figure
    gpt3 = next(r for r in C.check_national_average() if r["run"].startswith("GPT-3"))
    assert gpt3["national_error"] < -0.1                    # the US average understates GPT-3's site by > 10 %


def test_hourly_series_and_errors():
    flat = C.hourly([1000] * 24, [400] * 24, pue=1.2)
    assert flat == pytest.approx(1000 * 24 * 1.2 * 400 / 1e6)
    # the same energy moved to the cleaner half of the day emits less
    g = [100] * 12 + [500] * 12
    assert C.hourly([2000] * 12 + [0] * 12, g) < C.hourly([1000] * 24, g)
    with pytest.raises(ValueError, match="equal-length"):
        C.hourly([1, 2], [1])
    with pytest.raises(ValueError, match="site="):
        C.site_carbon(1, 1.1, "mars")
