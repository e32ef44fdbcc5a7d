
(function () {
  "use strict";
  // Filters over the listed findings: plain DOM, reading only data-
  // attributes. Without JavaScript the form stays hidden and every listed
  // finding is shown.
  var form = document.getElementById("filters");
  if (!form) { return; }
  var items = Array.prototype.slice.call(document.querySelectorAll("details.finding"));
  var notes = Array.prototype.slice.call(document.querySelectorAll("li.cap-note[data-code]"));
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=severity]"));
  var code = document.getElementById("filter-code");
  var table = document.getElementById("filter-table");
  var count = document.getElementById("shown-count");

  function chosen(select) {
    var option = select.options[select.selectedIndex];
    return option && !option.hasAttribute("data-all") ? { value: option.value } : null;
  }

  function apply() {
    var severities = {};
    boxes.forEach(function (box) { if (box.checked) { severities[box.value] = true; } });
    var c = chosen(code), t = chosen(table), shown = 0;
    items.forEach(function (item) {
      var d = item.dataset;
      var show = severities[d.severity] === true &&
        (c === null || d.code === c.value) && (t === null || d.table === t.value);
      item.hidden = !show;
      if (show) { shown += 1; }
    });
    notes.forEach(function (note) {
      note.hidden = c !== null && note.dataset.code !== c.value;
    });
    count.textContent = shown + " of " + items.length + " listed finding(s) shown";
  }

  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  document.getElementById("filter-reset").addEventListener("click", function () {
    boxes.forEach(function (box) { box.checked = true; });
    code.selectedIndex = 0;
    table.selectedIndex = 0;
    apply();
  });
  form.hidden = false;
  apply();
}());
