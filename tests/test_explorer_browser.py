"""The explorer end to end in a real browser (issue 14): Debian's chromium driven by Playwright.

The server runs in a thread (uvicorn, a free port, tiny render frames). Every number the test reads
off the page is compared with the toy model's own trace. Skipped, with the reason, where chromium
or Playwright is absent (`make test` installs both)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
SENTENCE = "the tiny red fox saw a huge green tower"

if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed (make test installs it: apt-get install chromium)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the dev extra)")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.render


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import uvicorn

    from attention_manim.explorer.app import create_app
    from attention_manim.explorer.core import Models

    app = create_app(Models.from_args(device="cpu"), renders=tmp_path_factory.mktemp("renders"),
                     extra_config={"pixel_width": 192, "pixel_height": 108, "frame_rate": 5})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started
    yield f"http://127.0.0.1:{port}/"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        pg = b.new_page(viewport={"width": 1280, "height": 900})
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(server)
        pg.wait_for_selector("body[data-ready]", timeout=60000)
        yield pg
        b.close()
        assert not errors, errors


def show(pg, sentence):
    before = pg.evaluate("document.body.dataset.ready")
    pg.fill("#sentence", sentence)
    pg.press("#sentence", "Enter")
    pg.wait_for_function(f"document.body.dataset.ready !== {before!r}", timeout=60000)


def weights(pg):
    return pg.eval_on_selector_all("#pattern .cell", "cs => cs.map(c => [+c.dataset.q, +c.dataset.k, +c.dataset.weight])")


def test_sentence_gives_n_squared_cells_with_the_traces_weights(page, toy_model):
    show(page, SENTENCE)
    trace = toy_model.trace(SENTENCE)
    n = trace.n_tokens
    assert page.locator("#pattern .cell").count() == n * n
    assert page.evaluate("document.body.dataset.head") == "0"
    ht = trace.head(0, 0)
    for q, k, w in weights(page):
        assert w == pytest.approx(0.0 if ht.mask[q, k] else ht.pattern[q, k], abs=1e-12)
    # masked triangle empty: no dot where a query would look ahead (video layout: keys are rows)
    assert page.locator("#pattern .cell.masked circle").count() == 0
    assert page.locator("#pattern .cell.masked").count() == n * (n - 1) // 2
    # hover a cell: q·k, score and weight as the trace has them; the aria-label carries the weight
    q, k = trace.tokens.index("fox"), trace.tokens.index("red")
    cell = page.locator(f'#pattern .cell[data-q="{q}"][data-k="{k}"]')
    cell.hover()
    assert float(page.inner_text("#detail-weight")) == pytest.approx(ht.pattern[q, k], abs=5e-5)
    assert float(page.inner_text("#detail-score")) == pytest.approx(ht.scores[q, k], abs=5e-5)
    qk = float(ht.q[q] @ ht.k[k])
    assert float(page.inner_text("#detail-qk")) == pytest.approx(qk, abs=5e-4)
    assert f"{ht.pattern[q, k]:.4f}" in cell.get_attribute("aria-label")
    assert cell.get_attribute("tabindex") == "0"
    # the keyboard reaches cells too: focus moves with the arrow keys and shows the numbers
    cell.focus()
    page.keyboard.press("ArrowDown")  # the next key row, same query column
    assert float(page.inner_text("#detail-weight")) == pytest.approx(ht.pattern[q, k + 1], abs=5e-5)
    # the paper layout transposes: queries become rows
    page.check("#paper")
    first_row = page.eval_on_selector_all('#pattern .cell[data-row="0"]', "cs => cs.map(c => +c.dataset.q)")
    assert set(first_row) == {0}
    page.uncheck("#paper")


def test_switching_head_changes_the_pattern(page, toy_model):
    show(page, SENTENCE)
    before = weights(page)
    page.select_option("#head", "2")
    page.wait_for_selector('body[data-head="2"]')
    after = weights(page)
    ht = toy_model.trace(SENTENCE).head(0, 2)
    assert after != before
    for q, k, w in after:
        assert w == pytest.approx(0.0 if ht.mask[q, k] else ht.pattern[q, k], abs=1e-12)
    # the model view: one small grid per head, and a click on one opens it
    assert page.locator("#heads button").count() == 4
    page.click('#heads button[data-head="3"]')
    page.wait_for_selector('body[data-head="3"]')
    assert page.locator('#heads button.current[data-head="3"]').count() == 1
    # next-token probabilities, as the trace ranks them
    top = toy_model.trace(SENTENCE).next_token(3)
    toks = page.eval_on_selector_all("#next .tok", "xs => xs.map(x => x.textContent)")
    assert toks[:3] == [t for _, t, _ in top]


def test_unknown_word_is_named_with_the_vocabulary_a_click_away(page):
    show(page, "the tiny zorble saw a tower")
    page.wait_for_selector("#error:not([hidden])")
    text = page.inner_text("#error")
    assert "the model 'toy' does not know the word 'zorble'" in text
    page.click("#vocab-link")
    page.wait_for_selector("#vocab:not([hidden])")
    assert "fox" in page.inner_text("#vocab-words").split()
    show(page, SENTENCE)
    assert page.locator("#error").is_hidden()


def test_language_switch_uses_the_catalog(page):
    from attention_manim.scenes.i18n import load_catalog

    page.select_option("#lang", "ko")
    page.wait_for_function("document.documentElement.lang === 'ko'")
    assert page.inner_text("#render") == load_catalog("ko")["explorer.render_button"]
    page.select_option("#lang", "en")
    page.wait_for_function("document.documentElement.lang === 'en'")


def test_render_a_tiny_clip_and_play_it(page):
    show(page, "a fluffy blue creature")
    page.select_option("#head", "0")
    page.wait_for_selector('body[data-head="0"]')
    page.select_option("#scene", "attention_pattern")
    page.click("#render")
    page.wait_for_selector("#queue li[data-state]", timeout=10000)
    page.wait_for_function("document.getElementById('player').getAttribute('src')", timeout=240000)
    page.wait_for_function("document.getElementById('player').readyState >= 1", timeout=30000)
    assert page.evaluate("document.getElementById('player').duration") > 1
    links = page.eval_on_selector_all("#files a", "as => as.map(a => a.getAttribute('href'))")
    assert any(h.endswith(".srt") for h in links)
    assert any(h.endswith("present/index.html") for h in links)
    assert page.locator('#queue li[data-state="done"]').count() >= 1


def test_a_page_from_another_site_rebound_to_this_address_can_do_nothing(server, page):
    """DNS rebinding, in a real browser: `evil.example` resolves to 127.0.0.1 (Chromium's resolver
    rules stand in for a hostile DNS server). The page loads from the attacker's name, so every
    request it makes carries `Host: evil.example:PORT`: the explorer answers none of them."""
    port = server.rstrip("/").rsplit(":", 1)[1]
    evil = f"http://evil.example:{port}/"
    # a second browser from the module's Playwright (one sync Playwright per thread)
    b = page.context.browser.browser_type.launch(executable_path=CHROMIUM,
                                                  args=ARGS + ["--host-resolver-rules=MAP evil.example 127.0.0.1"])
    try:
        pg = b.new_page()
        resp = pg.goto(evil)
        assert resp.status == 403  # the page itself is refused, not only the API
        assert "own address" in pg.content()
        # a script running on that origin (as the attacker's page would) can neither queue a render
        # nor read the queue
        got = pg.evaluate("""async () => {
            const post = await fetch('/api/render', {method: 'POST', headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({scene: 'softmax', sentence: 'a fluffy blue creature', model: 'toy'})});
            const queue = await fetch('/api/queue');
            return [post.status, queue.status, await queue.text()];
        }""")
        assert got[0] == 403 and got[1] == 403 and "waiting" not in got[2]
    finally:
        b.close()
    # and nothing was queued: the real address shows an empty queue
    import json
    import urllib.request

    with urllib.request.urlopen(server + "api/queue") as r:
        q = json.loads(r.read())
    jobs = [j for j in (q["current"], *q["waiting"], *q["done"]) if j]
    assert not any(j["scene"] == "softmax" for j in jobs)  # (the other tests here render other scenes)


def test_a_page_from_another_host_name_is_refused_in_a_real_browser(server, page):
    """DNS rebinding, as an attacker would do it: a site whose name resolves to 127.0.0.1 (here by
    chromium's --host-resolver-rules) loads the explorer's page and calls its API from there. The
    explorer answers only its own host names: the page is refused (403) and so is the API call; the
    same browser reaches the explorer under 127.0.0.1. (A second browser from the module's own
    Playwright: two sync Playwrights cannot run at once.)"""
    port = server.rstrip("/").rsplit(":", 1)[1]
    evil = f"http://evil.example:{port}/"
    b = page.context.browser.browser_type.launch(executable_path=CHROMIUM,
                                                 args=[*ARGS, "--host-resolver-rules=MAP evil.example 127.0.0.1"])
    try:
        pg = b.new_page()
        answer = pg.goto(evil)
        assert answer is not None and answer.status == 403, answer and answer.status
        status = pg.evaluate("""async () => (await fetch('/api/queue')).status""")
        assert status == 403
        posted = pg.evaluate("""async () => (await fetch('/api/render', {method: 'POST',
            headers: {'Content-Type': 'application/json'}, body: '{}'})).status""")
        assert posted == 403
        own = pg.goto(server)
        assert own is not None and own.status == 200
    finally:
        b.close()
