"""The review console in headless Chromium: on a catalog with the manual release policy,
log in through the development identity provider, open a case, map it to a candidate with the keyboard, see it
leave the queue; then, logged in again as an operator_admin, press "Release now"; the platform's own stages relay
the stream (AW-03) and apply it to the product projection (AW-04), and the item is on the public product API.

Debian's ``chromium`` and ``chromium-driver`` drive it through selenium (``./run tests`` installs them on a fresh
Debian machine). Screenshots are kept as test artifacts under ``$PRW_TEST_ARTIFACTS/review-console`` or, without
that variable, the test's tmp_path; the test prints where.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.wait import WebDriverWait

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.product.scopes import project_catalog
from prw_platform.runtime import Budget, run_stage
from tests.e2e.admin.conftest import TENANT, Cases
from tests.integration.resolution.pipeline import CATALOG

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
TIMEOUT_S = 15


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    root = os.environ.get("PRW_TEST_ARTIFACTS")
    folder = Path(root) / "review-console" if root else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"review console screenshots: {folder}")
    return folder


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1440,1000")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def _press(driver: WebDriver, key: str) -> None:
    ActionChains(driver).send_keys(key).perform()


def _wait(driver: WebDriver) -> WebDriverWait[WebDriver]:
    return WebDriverWait(driver, TIMEOUT_S)


def _log_in_as(driver: WebDriver, name: str) -> None:
    """On the development identity provider's page (the console sent the browser there): pick ``name``."""
    user = _wait(driver).until(
        expected_conditions.element_to_be_clickable((By.XPATH, f"//button[contains(., '{name}')]"))
    )
    user.click()


def _queue_rows(driver: WebDriver) -> list[str]:
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "table.queue tbody td:first-child a")]


def _manual_catalog(platform: Platform) -> None:
    """cat_primary on the manual release policy (nothing is public until someone releases it), projected by the
    product service at its current history epoch."""
    platform.catalogs.set_release_policy(TENANT, CATALOG, "manual")
    epoch = platform.decisions.streams(TENANT, CATALOG).history_epoch
    project_catalog(platform.product_db, TENANT, CATALOG, epoch)


def _relay_and_apply(platform: Platform) -> None:
    """The platform's own stages, as ``prw worker`` and the Dagster sensors drive them."""
    run_stage(platform, "relay", Budget(batches=10))
    applied = run_stage(platform, "apply", Budget(batches=10))
    assert applied.counts.get("applied", 0) > 0, applied


def test_a_reviewer_maps_a_case_with_the_keyboard_an_admin_releases_it_and_the_item_is_public(
    admin: BackgroundServer, admin_platform: Platform, cases: Cases, browser: WebDriver, screenshots: Path
) -> None:
    _manual_catalog(admin_platform)
    first, second = cases.open(), cases.open()
    item_id = cases.item()

    # No session: the console sends the browser to the login, and the development IdP shows its users.
    browser.get(f"{admin.url}/console/review?status=awaiting_human")
    _wait(browser).until(expected_conditions.title_contains("dev login"))
    browser.save_screenshot(str(screenshots / "01-dev-idp-login.png"))
    _log_in_as(browser, "Rita Reviewer")

    # Back on the queue, logged in: both cases, oldest first.
    _wait(browser).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "table.queue")))
    assert _queue_rows(browser) == [first["case_id"], second["case_id"]]
    browser.save_screenshot(str(screenshots / "02-queue.png"))

    # j opens the first case: its evidence beside the claims and the ranked candidates.
    _press(browser, "j")
    _wait(browser).until(expected_conditions.url_contains(f"/console/review/{first['case_id']}"))
    candidate = browser.find_element(By.CSS_SELECTOR, "ol.candidates li.candidate")
    assert item_id in candidate.text
    assert browser.find_element(By.CSS_SELECTOR, "pre.excerpt").text
    browser.save_screenshot(str(screenshots / "03-case.png"))

    # ? shows the shortcuts.
    _press(browser, "?")
    assert browser.find_element(By.ID, "help").is_displayed()
    browser.save_screenshot(str(screenshots / "04-shortcuts.png"))
    _press(browser, "?")

    # 1 maps the listing to candidate 1; the console moves on to the next case.
    _press(browser, "1")
    _wait(browser).until(expected_conditions.url_contains(f"/console/review/{second['case_id']}"))
    assert f"Decided {first['case_id']}" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    browser.save_screenshot(str(screenshots / "05-next-case.png"))

    # g: the queue of awaiting cases, which the decided case has left.
    _press(browser, "g")
    _wait(browser).until(expected_conditions.url_contains("/console/review?status=awaiting_human"))
    assert _queue_rows(browser) == [second["case_id"]]
    browser.save_screenshot(str(screenshots / "06-queue-after.png"))

    # Rita logs out; Ada (operator_admin) logs in and opens the releases (p): the catalog is manual, with the
    # accepted item and mappings waiting.
    log_out = browser.find_element(By.XPATH, "//button[normalize-space()='Log out']")
    log_out.click()
    # The logout is a form POST: wait until it has navigated away, or the next page may still see the session.
    _wait(browser).until(expected_conditions.staleness_of(log_out))
    browser.get(f"{admin.url}/console/releases")
    _log_in_as(browser, "Ada Admin")
    _wait(browser).until(expected_conditions.url_contains("/console/releases"))
    row = browser.find_element(By.XPATH, f"//table[contains(@class, 'releases')]//tr[.//code[.='{CATALOG}']]")
    assert "manual" in row.text
    browser.save_screenshot(str(screenshots / "07-releases.png"))

    # R presses "Release now": the publication revision is on the page.
    _press(browser, "R")
    notice = _wait(browser).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".notice .publication-revision"))
    )
    assert notice.text == "1"
    browser.save_screenshot(str(screenshots / "08-released.png"))

    # The notice links to the release's decision: actor, rationale, the release.authorized event.
    browser.find_element(By.CSS_SELECTOR, ".notice a").click()
    _wait(browser).until(expected_conditions.url_contains("/console/decisions/dec_"))
    assert "operator:ada" in browser.find_element(By.CSS_SELECTOR, ".case-head").text
    browser.save_screenshot(str(screenshots / "09-release-decision.png"))

    # The relay and the product consumer run; the public product API serves the item and the reviewed listing.
    _relay_and_apply(admin_platform)
    with BackgroundServer(compose.product_app(admin_platform, TENANT, CATALOG)) as product:
        browser.get(f"{product.url}/v1/items/{item_id}")
        assert item_id in browser.find_element(By.TAG_NAME, "body").text
        browser.save_screenshot(str(screenshots / "10-public-item.png"))
        browser.get(f"{product.url}/v1/items/{item_id}/listings")
        listings = browser.find_element(By.TAG_NAME, "body").text
        browser.save_screenshot(str(screenshots / "11-public-listings.png"))
    assert first["listing_id"] in listings

    decision = cases.resolution.one(
        "SELECT actor, action, effects, details FROM resolver.decision WHERE case_id = %s AND action = 'map_listing'",
        first["case_id"],
    )
    assert decision["actor"] == "reviewer:rita"
    assert decision["effects"]["item_id"] == item_id
    assert decision["details"]["review_action"] == "map_to"
    release = cases.resolution.one("SELECT authorized_by, publication_revision FROM resolver.release")
    assert release == {"authorized_by": "operator:ada", "publication_revision": 1}
    assert sorted(p.name for p in screenshots.glob("*.png")) == [
        "01-dev-idp-login.png",
        "02-queue.png",
        "03-case.png",
        "04-shortcuts.png",
        "05-next-case.png",
        "06-queue-after.png",
        "07-releases.png",
        "08-released.png",
        "09-release-decision.png",
        "10-public-item.png",
        "11-public-listings.png",
    ]
