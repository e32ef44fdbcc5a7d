(function () {
  "use strict";
  // Filters over the listed findings: plain DOM, reading only data-
  // attributes. Without JavaScript the form stays hidden and every listed
  // finding is shown. The filter is kept in the URL's hash
  // (#severity=critical,major&code=...&table=...), so a link or a reload
  // shows the same findings; a hash naming a finding (#f-...) is left alone.
  var form = document.getElementById("filters");
  if (!form) { return; }
  var list = document.getElementById("finding-list");
  var items = list.getElementsByTagName("details");
  var total = items.length;
  var notes = Array.prototype.slice.call(document.querySelectorAll("li.cap-note[data-code]"));
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=severity]"));
  var code = document.getElementById("filter-code");
  var table = document.getElementById("filter-table");
  var count = document.getElementById("shown-count");
  var unlistedNote = document.getElementById("table-unlisted");

  function chosen(select) {
    var option = select.options[select.selectedIndex];
    return option && !option.hasAttribute("data-all") ? option : null;
  }

  function select(element, value) {
    for (var i = 0; i < element.options.length; i += 1) {
      var option = element.options[i];
      if (!option.hasAttribute("data-all") && option.value === value) {
        element.selectedIndex = i;
        return;
      }
    }
    element.selectedIndex = 0;
  }

  function state() {
    var parts = [];
    var off = boxes.filter(function (box) { return !box.checked; });
    if (off.length) {
      parts.push("severity=" + boxes.filter(function (box) { return box.checked; })
        .map(function (box) { return encodeURIComponent(box.value); }).join(","));
    }
    var c = chosen(code), t = chosen(table);
    if (c) { parts.push("code=" + encodeURIComponent(c.value)); }
    if (t) { parts.push("table=" + encodeURIComponent(t.value)); }
    return parts.join("&");
  }

  function read(hash) {
    var text = hash.replace(/^#/, "");
    if (text.indexOf("=") < 0) { return false; }
    var params = {};
    text.split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at > 0) {
        try { params[pair.slice(0, at)] = decodeURIComponent(pair.slice(at + 1)); } catch (e) { /* not ours */ }
      }
    });
    var wanted = params.severity === undefined ? null : params.severity.split(",");
    boxes.forEach(function (box) { box.checked = wanted === null || wanted.indexOf(box.value) >= 0; });
    select(code, params.code === undefined ? null : params.code);
    select(table, params.table === undefined ? null : params.table);
    return true;
  }

  function apply() {
    var severities = {};
    boxes.forEach(function (box) { if (box.checked) { severities[box.value] = true; } });
    var c = chosen(code), t = chosen(table), shown = 0;
    var cv = c && c.value, tv = t && t.value;
    for (var i = 0; i < total; i += 1) {
      var item = items[i];
      var show = severities[item.getAttribute("data-severity")] === true &&
        (c === null || item.getAttribute("data-code") === cv) &&
        (t === null || item.getAttribute("data-table") === tv);
      if (item.hidden === show) { item.hidden = !show; }
      if (show) { shown += 1; }
    }
    notes.forEach(function (note) {
      note.hidden = c !== null && note.getAttribute("data-code") !== cv;
    });
    count.textContent = shown + " of " + total + " listed finding(s) shown";
    var missing = t ? Number(t.getAttribute("data-unlisted")) : 0;
    unlistedNote.textContent = missing ? "Table " + t.value + ": " + missing + " of its " +
      t.getAttribute("data-total") + " finding(s) not listed (in the download above)" : "";
  }

  function remember() {
    var text = state();
    var url = location.href.split("#")[0] + (text ? "#" + text : "");
    try { history.replaceState(null, "", url); } catch (e) { /* a page without history */ }
  }

  function changed() { apply(); remember(); }

  function openAll(open) {
    for (var i = 0; i < total; i += 1) {
      if (!items[i].hidden) { items[i].open = open; }
    }
  }

  form.addEventListener("change", changed);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  document.getElementById("filter-reset").addEventListener("click", function () {
    boxes.forEach(function (box) { box.checked = true; });
    code.selectedIndex = 0;
    table.selectedIndex = 0;
    changed();
  });
  document.getElementById("open-all").addEventListener("click", function () { openAll(true); });
  document.getElementById("close-all").addEventListener("click", function () { openAll(false); });
  window.addEventListener("hashchange", function () { if (read(location.hash)) { apply(); } });

  // Printing shows every listed finding, open, whatever the filter.
  var printed = null;
  window.addEventListener("beforeprint", function () {
    printed = [];
    for (var i = 0; i < total; i += 1) {
      if (!items[i].open) { printed.push(items[i]); items[i].open = true; }
    }
  });
  window.addEventListener("afterprint", function () {
    (printed || []).forEach(function (item) { item.open = false; });
    printed = null;
  });

  // The findings not listed: carried in the page as text, offered as a file.
  var unlisted = document.getElementById("unlisted");
  var download = document.getElementById("download-unlisted");
  if (unlisted && download) {
    download.addEventListener("click", function () {
      var blob = new Blob([unlisted.value], { type: "application/x-ndjson" });
      var link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = "findings-not-listed.jsonl";
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 0);
    });
    download.hidden = false;
  }

  read(location.hash);
  form.hidden = false;
  apply();
}());
