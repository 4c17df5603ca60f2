"""The review console in headless Chromium (issue 8 "Done when"): log in through the development identity
provider, open a case, map it to a candidate with the keyboard, see it leave the queue.

Debian's ``chromium`` and ``chromium-driver`` drive it through selenium (``./run tests`` installs them on a fresh
Debian machine). Screenshots are kept as test artifacts under ``$PRW_TEST_ARTIFACTS/review-console`` or, without
that variable, the test's tmp_path; the test prints where. (Releasing the catalog and reading the item on the
public API is the releases' part of issue 8: ``POST /v1/releases`` is not on this branch.)
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

from prw_api.server import BackgroundServer
from tests.e2e.admin.conftest import Cases

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


def test_a_reviewer_logs_in_maps_a_case_with_the_keyboard_and_it_leaves_the_queue(
    admin: BackgroundServer, cases: Cases, browser: WebDriver, screenshots: Path
) -> None:
    first, second = cases.open(), cases.open()
    item_id = cases.item()

    # No session: the console sends the browser to the login, and the development IdP shows its users.
    browser.get(f"{admin.url}/console/review?status=awaiting_human")
    login = _wait(browser).until(
        expected_conditions.element_to_be_clickable((By.XPATH, "//button[contains(., 'Rita Reviewer')]"))
    )
    browser.save_screenshot(str(screenshots / "01-dev-idp-login.png"))
    login.click()

    # Back on the queue, logged in: both cases, oldest first.
    _wait(browser).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "table.queue")))
    rows = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.queue tbody td:first-child a")]
    assert rows == [first["case_id"], second["case_id"]]
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

    # The decided case has left the queue of awaiting cases.
    browser.get(f"{admin.url}/console/review?status=awaiting_human")
    rows = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.queue tbody td:first-child a")]
    assert rows == [second["case_id"]]
    browser.save_screenshot(str(screenshots / "06-queue-after.png"))

    decision = cases.resolution.one(
        "SELECT actor, action, effects, details FROM resolver.decision WHERE case_id = %s AND action = 'map_listing'",
        first["case_id"],
    )
    assert decision["actor"] == "reviewer:rita"
    assert decision["effects"]["item_id"] == item_id
    assert decision["details"]["review_action"] == "map_to"
    assert sorted(p.name for p in screenshots.glob("*.png")) == [
        "01-dev-idp-login.png",
        "02-queue.png",
        "03-case.png",
        "04-shortcuts.png",
        "05-next-case.png",
        "06-queue-after.png",
    ]
