// The page of `judgekit label`: labeller.js fed by a stand-in for the widget's model that
// talks to the labelling server (GET state, POST label and position; see labels/page.py).
import labeller from "./labeller.js";

const NOT_RUNNING =
  "label not saved: the labelling server is not running (start `judgekit label` again)";
const handlers = {};
let state = await (await fetch("state")).json();

function fire(names) {
  names.forEach((name) => (handlers[`change:${name}`] || []).forEach((callback) => callback()));
}

function update(reply) {
  const changed = Object.keys(reply).filter(
    (key) => JSON.stringify(reply[key]) !== JSON.stringify(state[key]),
  );
  state = { ...state, ...reply };
  fire(changed);
}

async function post(path, body) {
  try {
    const reply = await fetch(path, { method: "POST", body: JSON.stringify(body) });
    update(await reply.json());
  } catch {
    update({ error: NOT_RUNNING });
  }
}

const model = {
  get: (key) => state[key],
  set: (key, value) => {
    state = { ...state, [key]: value };
    fire([key]);
  },
  save_changes: () => post("position", { position: state.position }),
  send: (message) => post("label", message),
  on: (event, callback) => (handlers[event] ||= []).push(callback),
};
labeller.render({ model, el: document.getElementById("labeller") });
