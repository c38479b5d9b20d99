// QuestionWidget front end: a question that belongs to no task, drawn by QuestionForms (joined
// in front of this module by question_form.py).

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "mtj-task mtj-question-widget";
  const head = document.createElement("div");
  head.className = "mtj-muted";
  const view = QuestionForms.questionsView(model);
  root.append(head, view.root);
  el.append(root);
  function update() {
    head.textContent = `question from ${model.get("server") || "the server"}`;
    view.update();
  }
  model.on("change:questions", update);
  model.on("change:server", update);
  update();
  return () => {
    model.off("change:questions", update);
    model.off("change:server", update);
  };
}

export default { render };
