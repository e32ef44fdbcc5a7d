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
  // (the rows as an array: a live collection of them is walked again from
  // the start after every change to the list, as inserting details is)
  var items = Array.prototype.slice.call(list.getElementsByTagName("details"));
  // A page listing many findings carries their details as markup (written,
  // and so escaped, by the page's template) in an inert comment: the rows
  // are built from it a chunk at a time as the page opens, and a finding's
  // details are put in when it is opened, opened all or printed.
  var source = document.getElementById("finding-data");
  var parts = source && source.firstChild ? source.firstChild.data.split("</details>") : [];
  parts.pop();  // (what follows the last finding)
  var total = source ? parts.length : items.length;
  var built = source ? 0 : total;
  var meta = [];  // each finding's severity, code, table, site and staff, built or not
  for (var m = 0; m < total; m += 1) {
    meta.push(source ? [attribute(parts[m], "data-severity"), attribute(parts[m], "data-code"),
      attribute(parts[m], "data-table"), attribute(parts[m], "data-site"),
      attribute(parts[m], "data-staff")] : [items[m].getAttribute("data-severity"),
      items[m].getAttribute("data-code"), items[m].getAttribute("data-table"),
      items[m].getAttribute("data-site") || "", items[m].getAttribute("data-staff") || ""]);
  }
  // The overview's links filter by site and staff member too (#site=, #staff=).
  var site = null, staff = null;
  var wanted = function () { return true; };  // the filter in force
  var notes = Array.prototype.slice.call(document.querySelectorAll("li.cap-note[data-code]"));
  var boxes = Array.prototype.slice.call(form.querySelectorAll("input[name=severity]"));
  var code = document.getElementById("filter-code");
  var table = document.getElementById("filter-table");
  var count = document.getElementById("shown-count");
  var unlistedNote = document.getElementById("table-unlisted");

  // The value of an attribute of a finding's markup, as the DOM reads it.
  function attribute(markup, name) {
    var found = markup.indexOf(" " + name + "=\"");
    if (found < 0) { return ""; }
    var at = found + name.length + 3;
    var value = markup.slice(at, markup.indexOf("\"", at));
    if (value.indexOf("&") < 0) { return value; }
    var reader = document.createElement("textarea");
    reader.innerHTML = value;
    return reader.value;
  }

  // Rows up to `upTo` built from the markup, each shown as the filter says.
  function build(upTo) {
    if (upTo <= built) { return; }
    var rows = [];
    for (var i = built; i < upTo; i += 1) {
      var part = parts[i];
      rows.push(part.slice(part.indexOf("<details"), part.indexOf("</summary>") + 10) + "</details>");
    }
    var last = list.lastElementChild;
    list.insertAdjacentHTML("beforeend", rows.join(""));
    for (var row = last.nextElementSibling; row; row = row.nextElementSibling) {
      row.hidden = !wanted(meta[built]);
      items.push(row);
      built += 1;
    }
  }

  function buildRest() {
    build(Math.min(total, built + 2000));
    if (built < total) { setTimeout(buildRest, 0); } else { apply(); }
  }

  // The details of the finding at `index`, put in on first need.
  function fill(index) {
    var part = parts[index];
    if (!part || index >= built) { return; }  // (a page with its details in place: none)
    parts[index] = null;
    items[index].insertAdjacentHTML("beforeend", part.slice(part.indexOf("</summary>") + 10));
  }

  // The finding a link names (#f-...), built, opened and shown.
  function reveal(hash) {
    if (!source || hash.indexOf("#f-") !== 0) { return; }
    var id = hash.slice(1), mark = " id=\"" + id + "\"";
    for (var i = built; i < total && !document.getElementById(id); i += 1) {
      if (parts[i].indexOf(mark) >= 0) { build(i + 1); }
    }
    var item = document.getElementById(id);
    if (!item) { return; }
    fill(items.indexOf(item));
    item.open = true;
    item.scrollIntoView();
  }

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
    if (site !== null) { parts.push("site=" + encodeURIComponent(site)); }
    if (staff !== null) { parts.push("staff=" + encodeURIComponent(staff)); }
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
    site = params.site === undefined ? null : params.site;
    staff = params.staff === undefined ? null : params.staff;
    return true;
  }

  function apply() {
    var severities = {};
    boxes.forEach(function (box) { if (box.checked) { severities[box.value] = true; } });
    var c = chosen(code), t = chosen(table), shown = 0;
    var cv = c && c.value, tv = t && t.value;
    wanted = function (f) {
      return severities[f[0]] === true && (c === null || f[1] === cv) && (t === null || f[2] === tv) &&
        (site === null || f[3] === site) && (staff === null || f[4] === staff);
    };
    for (var i = 0; i < total; i += 1) {
      var show = wanted(meta[i]);
      if (i < built && items[i].hidden === show) { items[i].hidden = !show; }
      if (show) { shown += 1; }
    }
    notes.forEach(function (note) {
      note.hidden = c !== null && note.getAttribute("data-code") !== cv;
    });
    count.textContent = shown + " of " + total + " listed finding(s) shown" +
      (site !== null ? "; site " + site : "") + (staff !== null ? "; staff member " + staff : "");
    var missing = t ? Number(t.getAttribute("data-unlisted")) : 0;
    unlistedNote.textContent = missing ? "Table " + t.value + ": " + missing + " of its " +
      t.getAttribute("data-total") + " finding(s) not listed (" +
      unlistedNote.getAttribute("data-where") + ")" : "";
  }

  function remember() {
    var text = state();
    var url = location.href.split("#")[0] + (text ? "#" + text : "");
    try { history.replaceState(null, "", url); } catch (e) { /* a page without history */ }
  }

  function changed() { apply(); remember(); }

  function openAll(open) {
    if (open) { build(total); }
    for (var i = 0; i < built; i += 1) {
      if (!items[i].hidden) {
        if (open) { fill(i); }
        items[i].open = open;
      }
    }
  }

  form.addEventListener("change", changed);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  document.getElementById("filter-reset").addEventListener("click", function () {
    boxes.forEach(function (box) { box.checked = true; });
    code.selectedIndex = 0;
    table.selectedIndex = 0;
    site = null;
    staff = null;
    changed();
  });
  document.getElementById("open-all").addEventListener("click", function () { openAll(true); });
  document.getElementById("close-all").addEventListener("click", function () { openAll(false); });
  window.addEventListener("hashchange", function () {
    if (read(location.hash)) { apply(); } else { reveal(location.hash); }
  });
  list.addEventListener("toggle", function (event) {
    if (source && event.target.open) { fill(items.indexOf(event.target)); }
  }, true);

  // Printing shows every listed finding, open, whatever the filter (on a
  // page built as it opens, each one's details put in first).
  var printed = null;
  function beforePrint() {
    if (printed) { return; }
    build(total);
    printed = [];
    for (var i = 0; i < total; i += 1) {
      fill(i);
      if (!items[i].open) { printed.push(items[i]); items[i].open = true; }
    }
  }
  function afterPrint() {
    (printed || []).forEach(function (item) { item.open = false; });
    printed = null;
  }
  window.addEventListener("beforeprint", beforePrint);
  window.addEventListener("afterprint", afterPrint);
  if (source && window.matchMedia) {
    window.matchMedia("print").addEventListener("change", function (event) {
      if (event.matches) { beforePrint(); } else { afterPrint(); }
    });
  }

  // The findings not listed: carried in the page as text, offered as a file.
  var unlisted = document.getElementById("unlisted");
  var download = document.getElementById("download-unlisted");
  if (unlisted && download) {
    download.addEventListener("click", function () {
      var blob = new Blob([unlisted.textContent], { type: "application/x-ndjson" });
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
  if (source) {
    build(Math.min(total, 300));  // the first screens at once, the rest as the page opens
    reveal(location.hash);
    setTimeout(buildRest, 0);
  }
}());
