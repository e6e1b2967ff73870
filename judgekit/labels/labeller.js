// Front end of judgekit's LabelWidget: one item at a time, scored from the keyboard.
// The page never receives the judge's score; every label goes to Python, which writes it.

const ACTIONS = { s: "skip", a: "abstain" };

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
  const help = element(
    "div",
    "jk-help",
    "Keys: a digit scores (past 9: digits, then Enter) · s skip · a abstain · ← → (or p n) move",
  );
  const error = element("div", "jk-error");
  root.append(header, scale, body, current, note, help, error);

  let typed = ""; // digits typed so far on a scale that goes past 9

  function item() {
    return model.get("items")[model.get("position")];
  }

  function draw() {
    const items = model.get("items");
    const position = model.get("position");
    const labelled = model.get("labelled");
    progress.textContent = `Item ${position + 1} of ${items.length}`;
    const count = items.filter((it) => labelled[it.id] !== undefined).length;
    done.textContent = ` · ${count} of ${items.length} labelled by ${model.get("labeller")}`;
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
    const shown = item();
    body.replaceChildren(
      element("div", "jk-id", `ID ${shown.id}`),
      ...shown.fields.flatMap((f) => [element("h4", "", f.title), element("p", "", f.text)]),
    );
    const label = labelled[shown.id];
    current.textContent = label
      ? `Your label: ${label.status === "ok" ? label.score : label.status}`
      : "Not labelled yet";
    note.value = label ? label.note : "";
    error.textContent = model.get("error");
  }

  function move(step) {
    const last = model.get("items").length - 1;
    model.set("position", Math.max(0, Math.min(last, model.get("position") + step)));
    model.save_changes();
  }

  function send(status, score, advance = true) {
    model.send({ kind: "label", item_id: item().id, status, score, note: note.value, advance });
  }

  root.addEventListener("keydown", (event) => {
    if (event.target === note) {
      if (event.key === "Escape") root.focus();
      event.stopPropagation();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const allowed = model.get("scale").map((a) => a.score);
    const key = event.key;
    if (/^[0-9]$/.test(key) && Math.max(...allowed) > 9) {
      typed = (typed + key).slice(-2); // scales up to 10 and beyond: digits, then Enter
      error.textContent = `typed ${typed}: Enter saves it`;
    } else if (key === "Enter" && typed !== "") {
      const score = Number(typed);
      typed = "";
      if (allowed.includes(score)) send("ok", score);
      else error.textContent = `${score} is not on the scale`;
    } else if (/^[0-9]$/.test(key) && allowed.includes(Number(key))) send("ok", Number(key));
    else if (key in ACTIONS) send(ACTIONS[key], null);
    else if (key === "ArrowRight" || key === "n") move(1);
    else if (key === "ArrowLeft" || key === "p") move(-1);
    else return;
    event.preventDefault();
    event.stopPropagation();
  });
  // An edited note on an item already labelled is saved with that label, staying put.
  note.addEventListener("change", () => {
    const label = model.get("labelled")[item().id];
    if (label) send(label.status, label.score, false);
  });
  root.addEventListener("click", (event) => {
    if (event.target !== note) root.focus();
  });

  model.on("change:position", draw);
  model.on("change:labelled", draw);
  model.on("change:error", draw);
  el.append(root);
  draw();
}

export default { render };
