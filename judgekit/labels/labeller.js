// Front end of judgekit's labeller: one item at a time, scored from the keyboard.
// The same render() runs in JupyterLab (anywidget) and on the page of `judgekit label`.
// It only ever receives the session's blind state (texts and positions, never item IDs,
// models or the judge's verdicts); every label goes back to Python, which writes it.

// One gesture per label. On a scale of single digits a digit is the label; on a scale past 9
// (0-10, 1-20) the digits typed show in a buffer and only Enter saves them, so "1" then "0"
// is 10, never a 1 and then a 0.
const MOVES = "s skip · ← → (or p n) move";
const HELP_DIGIT = `a digit scores · ${MOVES}`;
const HELP_SIDES = `1 or l left · 2 or r right · 0 or t tie · ${MOVES}`;
const HELP_TYPED = `type the score, Enter saves it (Backspace corrects, Esc clears) · ${MOVES}`;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function render({ model, el }) {
  const root = element("div", "jk-labeller");
  root.tabIndex = 0;
  // JupyterLab must not read these keys as notebook shortcuts (1 = heading, a = insert cell ...).
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  const focus = element("div", "jk-focus");
  const header = element("div", "jk-header");
  const progress = element("span", "jk-progress");
  const done = element("span", "jk-done");
  header.append(progress, done);
  const scale = element("div", "jk-scale");
  const body = element("div", "jk-item");
  const current = element("div", "jk-current");
  const note = element("textarea", "jk-note");
  note.placeholder = "Note (saved with the label; Esc to return to the keys)";
  note.rows = 2;
  const buffer = element("div", "jk-typed");
  buffer.setAttribute("aria-live", "polite");
  const help = element("div", "jk-help");
  const feedback = element("div", "jk-error");
  feedback.setAttribute("role", "status");
  root.append(focus, header, scale, body, current, buffer, note, help, feedback);

  let typed = ""; // digits typed so far on a scale that goes past 9: shown, saved by Enter

  function position() {
    return model.get("position");
  }

  function say(text) {
    feedback.textContent = text;
  }

  function showFocus() {
    const inside = root.contains(document.activeElement);
    root.classList.toggle("jk-unfocused", !inside);
    focus.textContent = inside
      ? "The labeller has the keyboard."
      : "The labeller lost the keyboard: click here to go on labelling.";
  }

  function draw() {
    const items = model.get("items");
    const labelled = model.get("labelled");
    const statuses = Object.values(labelled).map((label) => label.status);
    const count = statuses.filter((s) => s === "ok" || s === "abstain").length;
    const skipped = statuses.filter((s) => s === "skip").length;
    progress.textContent = `Item ${position() + 1} of ${items.length}`;
    done.textContent =
      ` · ${count} of ${items.length} labelled by ${model.get("labeller")}` +
      (skipped ? ` · ${skipped} skipped (they come back)` : "");
    scale.replaceChildren(
      ...model.get("scale").map((anchor) => {
        const row = element("div", "jk-anchor");
        row.append(element("b", "", `${anchor.score}`), element("span", "", ` ${anchor.label}`));
        if (anchor.points.length) {
          const list = element("ul");
          anchor.points.forEach((p) => list.append(element("li", "", p)));
          row.append(list);
        }
        return row;
      }),
    );
    body.replaceChildren(
      ...items[position()].fields.flatMap((f) => [
        element("h4", "", f.title),
        element("p", "", f.text),
      ]),
    );
    const label = labelled[String(position())];
    current.textContent = !label
      ? "Not labelled yet"
      : label.status === "ok"
        ? `Your label: ${shown(label.score)}`
        : label.status === "skip"
          ? "Skipped: not a label, this item comes back"
          : "You abstained on this item";
    note.value = label ? label.note : "";
    help.textContent = `Keys: ${keys()}${model.get("abstain") ? " · a abstain" : ""}`;
    typed = ""; // a new item (or a saved label) starts an empty buffer
    showTyped();
    say(model.get("error"));
  }

  // A pairwise study's choices are codes on the scale (1 left, 2 right, 0 tie), shown by name.
  const SIDE_KEYS = { l: "1", r: "2", t: "0" };
  function shown(score) {
    if (!model.get("pairwise")) return `${score}`;
    return { 1: "the left answer", 2: "the right answer", 0: "a tie" }[score] ?? `${score}`;
  }

  function multiDigit() {
    return Math.max(...allowed()) > 9;
  }

  function keys() {
    if (model.get("pairwise")) return HELP_SIDES;
    return multiDigit() ? HELP_TYPED : HELP_DIGIT;
  }

  function showTyped() {
    buffer.hidden = !multiDigit();
    buffer.textContent = typed
      ? `Typed: ${typed} (Enter saves ${typed})`
      : "Typed: (nothing yet; type the score, then Enter)";
  }

  function move(step) {
    const last = model.get("items").length - 1;
    model.set("position", Math.max(0, Math.min(last, position() + step)));
    model.save_changes();
    say("");
  }

  function send(status, score, advance = true) {
    say("saving ...");
    model.send({ kind: "label", position: position(), status, score, note: note.value, advance });
  }

  function allowed() {
    return model.get("scale").map((a) => a.score);
  }

  function digit(key) {
    const scores = allowed();
    if (!multiDigit()) {
      if (scores.includes(Number(key))) send("ok", Number(key));
      else say(`${key} is not on the scale (${scores.join(", ")}): nothing saved`);
      return;
    }
    // A digit joins the buffer only if some score on the scale starts with the result, so a
    // stray digit is refused on the spot instead of piling up into a label never meant.
    const next = String(Number(typed + key));
    if (scores.some((score) => String(score).startsWith(next)) && (typed + key).length <= 2) {
      typed = next;
      say("");
    } else {
      const kept = typed || "nothing";
      say(`${typed}${key} is not on the scale (${scores.join(", ")}): Enter saves ${kept}`);
    }
    showTyped();
  }

  function enter() {
    if (typed === "") {
      say("type the score first, then Enter");
      return;
    }
    const score = Number(typed);
    if (allowed().includes(score)) send("ok", score);
    else say(`${score} is not on the scale (${allowed().join(", ")}): nothing saved`);
  }

  function correct(clear) {
    typed = clear ? "" : typed.slice(0, -1);
    showTyped();
  }

  root.addEventListener("keydown", (event) => {
    if (event.target === note) {
      if (event.key === "Escape") root.focus();
      event.stopPropagation();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.key === "Tab") return;
    const key = model.get("pairwise") ? SIDE_KEYS[event.key] || event.key : event.key;
    if (/^[0-9]$/.test(key)) digit(key);
    else if (key === "Enter" && multiDigit()) enter();
    else if ((key === "Backspace" || key === "Escape") && multiDigit()) correct(key === "Escape");
    else if (key === "s") send("skip", null);
    else if (key === "a" && model.get("abstain")) send("abstain", null);
    else if (key === "a") say(`${model.get("rubric_name")} has no abstain value: score it, or skip (s)`);
    else if (key === "ArrowRight" || key === "n") move(1);
    else if (key === "ArrowLeft" || key === "p") move(-1);
    else if (key.length === 1) say(`${key} is not a key of the labeller: ${keys()}`);
    // Every other key stays here too: while the labeller has the focus, nothing reaches the page.
    event.preventDefault();
    event.stopPropagation();
  });
  // An edited note on an item already labelled is saved with that label, staying put.
  note.addEventListener("change", () => {
    const label = model.get("labelled")[String(position())];
    if (label) send(label.status, label.score, false);
  });
  root.addEventListener("click", (event) => {
    if (event.target !== note) root.focus();
  });
  root.addEventListener("focusin", showFocus);
  root.addEventListener("focusout", () => setTimeout(showFocus, 0));

  model.on("change:position", draw);
  model.on("change:labelled", draw);
  model.on("change:error", draw);
  el.append(root);
  draw();
  // Take the keyboard when shown, so the first digit labels instead of editing the notebook.
  const take = () => {
    if (root.isConnected && !root.contains(document.activeElement)) root.focus();
    showFocus();
  };
  requestAnimationFrame(take);
  setTimeout(take, 400); // JupyterLab re-focuses its notebook when the cell's run ends
}

export default { render };
