// kiln view: the page's behaviour. Written for kiln; no libraries, nothing fetched.
//
// The data (element #kiln-data, written by generator/print/view_model.cpp):
//   {format: "kiln-view", version: 1, title, source, layout,
//    origins: [[pointer, op], ...],          the nodes of the user's file, by index
//    types: ["Vector(float64, shape=(?,))", ...], every type once, by index
//    panes: [{title, graph}],                one pane, or two with --rewritten (before, after)
//    passes: [{name, applied: {rule: n}, seconds, changes: [{r: rule, rm: [N], add: [N]}]}]
//            where N = {op, o: [origin index]}  (only with --rewritten)
//    graphs: [{title, w, h, nodes: [V], edges: [E], trunks: [[x0, y0, ...]]}]}
//   E = {s, t, p: [x0, y0, x1, y1, ...]}: an edge from vertex s to vertex t along cubic Bézier
//        control points p (Graphviz), or {s, t, r: [...]}: through the route points r, drawn with
//        vertical tangents (kiln's layout). With b and k, the first k numbers come from
//        trunks[b] (the start the long edges of one source share), then p or r.
//   V = {k: "in"|"const"|"op"|"out", l: label, s: second line, f: full label, x, y, w, h (box
//        centre and size), n: op name, o: [origin index], p: JSON pointer (inputs, constants),
//        v: [{id, name, t: type index}] (the values it produces), i: [{s: vertex, o: output, t,
//        c: constant text}] (its inputs), g: inner graph index, pr: props, c: constant value,
//        dm / vm: destroy and view maps}
//   Vertices come in topological order (every edge goes from a lower index to a higher one).
//
// Strings from the graph file are untrusted: they only ever reach the document through
// textContent or setAttribute of a fixed attribute, never as markup.
"use strict";
(function () {
  const started = performance.now();
  const SVG = "http://www.w3.org/2000/svg";
  const data = JSON.parse(document.getElementById("kiln-data").textContent);
  const origins = data.origins || [];

  // --- small helpers -----------------------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  function edgePath(graph, e) {
    const own = e.r || e.p;
    const pts = e.b === undefined ? own : graph.trunks[e.b].slice(0, e.k).concat(own);
    return e.r ? routeText(pts) : pathText(pts);
  }

  // Through each route point with a vertical tangent (view_layout.cpp's bezier_through).
  function routeText(p) {
    let d = "M" + p[0] + " " + p[1];
    for (let k = 2; k + 1 < p.length; k += 2) {
      const dy = (p[k + 1] - p[k - 1]) / 2;
      d += "C" + p[k - 2] + " " + (p[k - 1] + dy) + " " + p[k] + " " + (p[k + 1] - dy) + " " + p[k] + " " + p[k + 1];
    }
    return d;
  }

  function typeText(t) { return typeof t === "number" ? (data.types || [])[t] || "?" : String(t); }

  function pathText(p) {
    let d = "M" + p[0] + " " + p[1];
    for (let k = 2; k + 5 < p.length; k += 6) {
      d += "C" + p[k] + " " + p[k + 1] + " " + p[k + 2] + " " + p[k + 3] + " " + p[k + 4] + " " + p[k + 5];
    }
    return d;
  }

  function originText(index) {
    const o = origins[index];
    return o ? o[0] + " " + o[1] : "?";
  }

  function nodeTitle(n) { return n.f || n.l; }

  function valueName(v) {
    if (v.name && v.id && v.name !== v.id) return v.name + " (id " + v.id + ")";
    return v.name || v.id || "";
  }

  // --- one drawn graph: a pane's main graph or an inner graph opened beside a node ----------

  const views = new Map();  // <g class="graph"> -> GraphView

  class GraphView {
    constructor(pane, gi, ox, oy, parentGroup, anchor) {
      this.pane = pane;
      this.gi = gi;
      this.graph = data.graphs[gi];
      this.ox = ox;
      this.oy = oy;
      this.anchor = anchor || null;  // {view, node} for an inner graph
      this.children = new Map();     // node index -> inner GraphView
      this.collapsed = new Set();
      this.hidden = new Uint8Array(this.graph.nodes.length);
      this.owner = new Int32Array(this.graph.nodes.length).fill(-1);
      this.selected = -1;
      this.badges = new Map();  // node index -> its "+k" badge while collapsed
      const n = this.graph.nodes.length;
      this.up = Array.from({length: n}, () => []);
      this.down = Array.from({length: n}, () => []);
      this.edgesOf = Array.from({length: n}, () => []);
      this.graph.edges.forEach((e, k) => {
        this.up[e.t].push(e.s);
        this.down[e.s].push(e.t);
        this.edgesOf[e.s].push(k);
        this.edgesOf[e.t].push(k);
      });
      this.group = svgEl("g", {class: "graph", transform: "translate(" + ox + "," + oy + ")"});
      views.set(this.group, this);
      if (anchor) this.drawFrame();
      const edgeLayer = svgEl("g", {class: "edges"});
      this.proxyLayer = svgEl("g", {class: "proxies"});
      const nodeLayer = svgEl("g", {class: "nodes"});
      this.edgeEls = this.graph.edges.map((e) => {
        const path = svgEl("path", {class: "edge", d: edgePath(this.graph, e), "marker-end": pane.arrow});
        edgeLayer.appendChild(path);
        return path;
      });
      this.nodeEls = this.graph.nodes.map((v, i) => {
        const g = svgEl("g", {class: "node k-" + v.k + (v.g !== undefined ? " has-inner" : ""),
                              transform: "translate(" + (v.x - v.w / 2) + "," + (v.y - v.h / 2) + ")",
                              "data-n": i});
        const r = v.k === "in" || v.k === "out" ? v.h / 2 : 4;
        g.appendChild(svgEl("rect", {width: v.w, height: v.h, rx: r, ry: r}));
        const label = svgEl("text", {x: v.w / 2, y: v.s ? v.h / 2 - 8 : v.h / 2});
        label.textContent = v.l;
        g.appendChild(label);
        if (v.s) {
          const sub = svgEl("text", {class: "sub", x: v.w / 2, y: v.h / 2 + 9});
          sub.textContent = v.s;
          g.appendChild(sub);
        }
        nodeLayer.appendChild(g);
        return g;
      });
      this.group.appendChild(edgeLayer);
      this.group.appendChild(this.proxyLayer);
      this.group.appendChild(nodeLayer);
      parentGroup.appendChild(this.group);
    }

    drawFrame() {
      const g = this.graph;
      const frame = svgEl("rect", {class: "inner-frame", x: -6, y: -26, width: g.w + 12, height: g.h + 32, rx: 6});
      const title = svgEl("text", {class: "inner-title", x: 6, y: -9});
      title.textContent = g.title;
      const close = svgEl("text", {class: "inner-close", x: g.w - 8, y: -8, "data-close": "1"});
      close.textContent = "\u00d7";
      this.group.append(frame, title, close);
    }

    node(i) { return this.graph.nodes[i]; }

    // The nodes that only feed `c`: every path from them to an output passes through c.
    subtree(c) {
      const seen = new Set([c]);
      const stack = [c];
      const ancestors = [];
      while (stack.length) {
        for (const u of this.up[stack.pop()]) {
          if (!seen.has(u)) {
            seen.add(u);
            ancestors.push(u);
            stack.push(u);
          }
        }
      }
      ancestors.sort((a, b) => b - a);  // consumers before producers
      const inside = new Set([c]);
      for (const a of ancestors) {
        if (this.down[a].every((d) => inside.has(d))) inside.add(a);
      }
      inside.delete(c);
      return inside;
    }

    toggleCollapse(c) {
      if (this.collapsed.has(c)) {
        this.collapsed.delete(c);
      } else {
        if (this.subtree(c).size === 0) return false;
        this.collapsed.add(c);
      }
      this.applyCollapse();
      return true;
    }

    expandAll() {
      this.collapsed.clear();
      this.applyCollapse();
    }

    applyCollapse() {
      this.hidden.fill(0);
      this.owner.fill(-1);
      const counts = new Map();
      for (const c of this.collapsed) {
        const s = this.subtree(c);
        counts.set(c, s.size);
        for (const h of s) {
          this.hidden[h] = 1;
          if (this.owner[h] < 0 || this.owner[h] < c) this.owner[h] = c;
        }
      }
      for (const badge of this.badges.values()) badge.remove();
      this.badges.clear();
      this.nodeEls.forEach((g, i) => {
        g.classList.toggle("hidden", this.hidden[i] === 1);
        g.classList.toggle("collapsed", this.collapsed.has(i) && !this.hidden[i]);
        if (this.collapsed.has(i)) {
          const v = this.node(i);
          const label = "+" + counts.get(i);
          const bw = 8 + 7 * label.length;
          const badge = svgEl("g", {class: "badge-group", transform: "translate(" + (v.w - bw / 2) + ",-8)"});
          badge.appendChild(svgEl("rect", {class: "badge-bg", x: -bw / 2, y: -8, width: bw, height: 16, rx: 8}));
          const t = svgEl("text", {class: "badge", x: 0, y: 0});
          t.textContent = label;
          badge.appendChild(t);
          g.appendChild(badge);
          this.badges.set(i, badge);
        }
      });
      this.graph.edges.forEach((e, k) => {
        this.edgeEls[k].classList.toggle("hidden", this.hidden[e.s] === 1 || this.hidden[e.t] === 1);
      });
      // Values entering a folded subgraph from outside now enter the node that folds it.
      this.proxyLayer.replaceChildren();
      const drawn = new Set();
      this.graph.edges.forEach((e) => {
        if (this.hidden[e.s] || !this.hidden[e.t]) return;
        let root = this.owner[e.t];
        while (root >= 0 && this.hidden[root]) root = this.owner[root];
        if (root < 0 || drawn.has(e.s + ":" + root)) return;
        drawn.add(e.s + ":" + root);
        const a = this.node(e.s), b = this.node(root);
        const y0 = a.y + a.h / 2, y1 = b.y - b.h / 2, dy = Math.max(30, (y1 - y0) / 2);
        this.proxyLayer.appendChild(svgEl("path", {
          class: "edge proxy", "marker-end": this.pane.arrow,
          d: "M" + a.x + " " + y0 + "C" + a.x + " " + (y0 + dy) + " " + b.x + " " + (y1 - dy) + " " + b.x + " " + y1}));
      });
    }

    // Shows the node `i` even if a collapsed node hides it.
    reveal(i) {
      let changed = false;
      while (this.hidden[i]) {
        let root = this.owner[i];
        while (root >= 0 && this.hidden[root]) root = this.owner[root];
        if (root < 0) break;
        this.collapsed.delete(root);
        this.applyCollapse();
        changed = true;
      }
      return changed;
    }

    clearMarks(classes) {
      for (const g of this.nodeEls) g.classList.remove(...classes);
      for (const p of this.edgeEls) p.classList.remove(...classes);
    }

    // Highlights node i, everything it reads (up) and everything it feeds (down).
    select(i) {
      this.clearMarks(["sel", "up", "down"]);
      this.selected = i;
      if (i < 0) return;
      const mark = (start, next, cls) => {
        const seen = new Set([start]);
        const stack = [start];
        while (stack.length) {
          const v = stack.pop();
          for (const w of next[v]) {
            if (seen.has(w)) continue;
            seen.add(w);
            stack.push(w);
            this.nodeEls[w].classList.add(cls);
          }
        }
        return seen;
      };
      const ups = mark(i, this.up, "up");
      const downs = mark(i, this.down, "down");
      this.graph.edges.forEach((e, k) => {
        if (ups.has(e.s) && ups.has(e.t)) this.edgeEls[k].classList.add("up");
        else if (downs.has(e.s) && downs.has(e.t)) this.edgeEls[k].classList.add("down");
      });
      this.nodeEls[i].classList.add("sel");
    }

    // Marks the nodes that stand for any of the given origins.
    link(originSet) {
      this.clearMarks(["linked"]);
      const found = [];
      if (!originSet || originSet.size === 0) return found;
      this.graph.nodes.forEach((v, i) => {
        if ((v.o || []).some((o) => originSet.has(o))) {
          this.nodeEls[i].classList.add("linked");
          found.push(i);
        }
      });
      return found;
    }
  }

  // --- panes: one SVG each, with pan and zoom ------------------------------------------------

  const panes = [];

  class Pane {
    constructor(index, spec) {
      this.index = index;
      this.box = el("div", "pane");
      this.box.appendChild(el("div", "pane-title", spec.title));
      this.svg = svgEl("svg", {"data-pane": index});
      const defs = svgEl("defs", {});
      this.arrow = "url(#arrow-" + index + ")";
      const marker = svgEl("marker", {id: "arrow-" + index, viewBox: "0 0 10 10", refX: 9, refY: 5,
                                      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"});
      marker.appendChild(svgEl("path", {d: "M0 0L10 5L0 10z", fill: "#8f9bb0"}));
      defs.appendChild(marker);
      this.svg.appendChild(defs);
      this.viewport = svgEl("g", {class: "viewport"});
      this.overlays = svgEl("g", {class: "overlays"});
      this.svg.appendChild(this.viewport);
      this.box.appendChild(this.svg);
      document.getElementById("panes").appendChild(this.box);
      this.scale = 1;
      this.tx = 0;
      this.ty = 0;
      this.main = new GraphView(this, spec.graph, 0, 0, this.viewport, null);
      this.viewport.appendChild(this.overlays);
      this.listen();
    }

    apply() {
      this.viewport.setAttribute("transform", "translate(" + this.tx + "," + this.ty + ") scale(" + this.scale + ")");
      this.svg.classList.toggle("far", this.scale < 0.45);
    }

    fit() {
      const r = this.svg.getBoundingClientRect();
      const g = this.main.graph;
      const w = Math.max(r.width, 50), h = Math.max(r.height, 50);
      this.scale = Math.min(w / (g.w + 20), h / (g.h + 20), 1.5);
      // A graph far taller (or wider) than the window would shrink to nothing: fit its width
      // and show its top instead.
      if (this.scale < 0.05) this.scale = Math.min(w / (g.w + 20), 1);
      this.tx = Math.max(10, (w - g.w * this.scale) / 2);
      this.ty = Math.max(10, (h - g.h * this.scale) / 2);
      this.apply();
    }

    zoomAt(factor, cx, cy) {
      const s = Math.min(8, Math.max(0.02, this.scale * factor));
      const k = s / this.scale;
      this.tx = cx - (cx - this.tx) * k;
      this.ty = cy - (cy - this.ty) * k;
      this.scale = s;
      this.apply();
    }

    // Pans (and zooms out when needed) so that a box of graph coordinates is in view.
    show(x0, y0, x1, y1) {
      const r = this.svg.getBoundingClientRect();
      const left = x0 * this.scale + this.tx, right = x1 * this.scale + this.tx;
      const top = y0 * this.scale + this.ty, bottom = y1 * this.scale + this.ty;
      if (left >= 0 && top >= 0 && right <= r.width && bottom <= r.height) return;
      this.scale = Math.min(this.scale, (r.width - 20) / (x1 - x0), (r.height - 20) / (y1 - y0));
      this.tx = (r.width - (x0 + x1) * this.scale) / 2;
      this.ty = (r.height - (y0 + y1) * this.scale) / 2;
      this.apply();
    }

    // Centres the view on a node of one of its graphs.
    centreOn(view, i) {
      const v = view.node(i);
      const r = this.svg.getBoundingClientRect();
      if (this.scale < 0.6) this.scale = 0.9;
      this.tx = r.width / 2 - (view.ox + v.x) * this.scale;
      this.ty = r.height / 2 - (view.oy + v.y) * this.scale;
      this.apply();
    }

    listen() {
      const svg = this.svg;
      let drag = null;
      svg.addEventListener("wheel", (ev) => {
        ev.preventDefault();
        const r = svg.getBoundingClientRect();
        this.zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
      }, {passive: false});
      svg.addEventListener("pointerdown", (ev) => {
        if (ev.button !== 0 || ev.target.closest(".node") || ev.target.closest("[data-close]")) return;
        drag = {x: ev.clientX, y: ev.clientY, tx: this.tx, ty: this.ty, moved: false};
        svg.setPointerCapture(ev.pointerId);
        svg.classList.add("dragging");
      });
      svg.addEventListener("pointermove", (ev) => {
        if (drag) {
          const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
          if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
          this.tx = drag.tx + dx;
          this.ty = drag.ty + dy;
          this.apply();
          return;
        }
        moveTooltip(ev);
      });
      const end = (ev) => {
        if (!drag) return;
        if (!drag.moved && !ev.target.closest(".node")) selectNode(null, -1);
        drag = null;
        svg.classList.remove("dragging");
      };
      svg.addEventListener("pointerup", end);
      svg.addEventListener("pointercancel", end);
      svg.addEventListener("click", (ev) => {
        const close = ev.target.closest("[data-close]");
        if (close) {
          const view = views.get(close.closest("g.graph"));
          if (view && view.anchor) closeInner(view.anchor.view, view.anchor.node);
          return;
        }
        const hit = hitNode(ev.target);
        if (hit) selectNode(hit.view, hit.i);
      });
      svg.addEventListener("dblclick", (ev) => {
        const hit = hitNode(ev.target);
        if (!hit) return;
        ev.preventDefault();
        activate(hit.view, hit.i);
      });
      svg.addEventListener("pointerover", (ev) => {
        const hit = hitNode(ev.target);
        if (hit) showTooltip(hit.view, hit.i, ev);
      });
      svg.addEventListener("pointerout", (ev) => {
        const hit = hitNode(ev.target);
        if (hit && !(ev.relatedTarget && hit.g.contains(ev.relatedTarget))) hideTooltip();
      });
    }
  }

  function hitNode(target) {
    const g = target.closest && target.closest("g.node");
    if (!g) return null;
    const view = views.get(g.closest("g.graph"));
    if (!view) return null;
    return {view: view, i: Number(g.getAttribute("data-n")), g: g};
  }

  // --- inner graphs --------------------------------------------------------------------------

  function openInner(view, i) {
    if (view.children.has(i)) return view.children.get(i);
    const v = view.node(i);
    const ox = view.ox + v.x + v.w / 2 + 36, oy = view.oy + v.y - v.h / 2;
    const child = new GraphView(view.pane, v.g, ox, oy, view.pane.overlays, {view: view, node: i});
    view.children.set(i, child);
    view.pane.show(ox - 6, oy - 26, ox + child.graph.w + 6, oy + child.graph.h + 6);
    return child;
  }

  function closeInner(view, i) {
    const child = view.children.get(i);
    if (!child) return;
    for (const k of Array.from(child.children.keys())) closeInner(child, k);
    child.group.remove();
    views.delete(child.group);
    view.children.delete(i);
    if (selection && selection.view === child) selectNode(null, -1);
  }

  // Double-click: open or close an inner graph, or fold or unfold what only feeds the node.
  function activate(view, i) {
    const v = view.node(i);
    if (v.g !== undefined) {
      if (view.children.has(i)) closeInner(view, i);
      else openInner(view, i);
    } else if (!view.toggleCollapse(i)) {
      flash("Nothing to collapse: every input of this node also feeds other nodes.");
    }
    if (selection && selection.view === view) showDetails(view, i);
  }

  // --- selection, details, links between panes -----------------------------------------------

  let selection = null;

  function selectNode(view, i) {
    for (const pane of panes) {
      pane.svg.classList.remove("focus");
      forEachView(pane.main, (w) => { if (w !== view) w.select(-1); });
    }
    if (!view || i < 0) {
      selection = null;
      for (const pane of panes) pane.main.link(null);
      showDetails(null, -1);
      return;
    }
    selection = {view: view, i: i};
    view.select(i);
    view.pane.svg.classList.add("focus");
    // The other pane: the nodes that stand for the same nodes of the file.
    const own = new Set(view.node(i).o || []);
    for (const pane of panes) {
      if (pane === view.pane) continue;
      const found = pane.main.link(own);
      pane.svg.classList.toggle("focus", found.length > 0);
    }
    showDetails(view, i);
  }

  function forEachView(view, fn) {
    fn(view);
    for (const child of view.children.values()) forEachView(child, fn);
  }

  function describe(view, i, target, withProps) {
    const v = view.node(i);
    const row = (key, value, cls) => {
      const line = el("div", "tt-row" + (cls ? " " + cls : ""));
      line.appendChild(el("span", "tt-key", key + " "));
      line.appendChild(document.createTextNode(value));
      target.appendChild(line);
    };
    const kinds = {in: "input", const: "constant", op: "node", out: "output"};
    target.appendChild(el("div", "tt-title", nodeTitle(v)));
    row(kinds[v.k] || v.k, "#" + i + (v.n && v.n !== v.l ? "  (" + v.n + ")" : ""));
    if (v.p) row("pointer", v.p, "ptr");
    for (const o of v.o || []) row("from", originText(o), "ptr");
    (v.v || []).forEach((val, k) => {
      const name = valueName(val);
      row(v.k === "op" ? "out " + k : "value", (name ? name + ": " : "") + typeText(val.t));
    });
    if (v.k !== "out") {
      (v.i || []).forEach((inp, k) => {
        let src = "";
        if (inp.c !== undefined) src = "constant " + inp.c;
        else if (inp.s !== undefined) {
          const s = view.node(inp.s);
          const val = (s.v || [])[inp.o || 0] || {};
          src = valueName(val) || s.l + (s.k === "op" ? " #" + inp.s : "");
        }
        row("in " + k, (src ? src + ": " : "") + typeText(inp.t));
      });
    }
    if (v.c !== undefined) row("value", v.c);
    if (v.dm) row("destroys", v.dm);
    if (v.vm) row("views", v.vm);
    if (withProps && v.pr) row("props", v.pr);
  }

  function showDetails(view, i) {
    const box = document.getElementById("details");
    box.replaceChildren();
    if (!view || i < 0) {
      box.appendChild(el("p", "hint", "Click a node to see its types, shapes, JSON pointer and where its values go."));
      return;
    }
    const v = view.node(i);
    box.appendChild(el("h2", "mono", nodeTitle(v)));
    const info = el("div", "");
    describe(view, i, info, true);
    info.firstChild.remove();  // the title is the heading
    box.appendChild(info);
    if (v.g !== undefined) {
      const b = el("button", "", view.children.has(i) ? "Close inner graph" : "Open inner graph");
      b.id = "inner-button";
      b.addEventListener("click", () => activate(view, i));
      box.appendChild(b);
    } else if (view.collapsed.has(i) || view.subtree(i).size > 0) {
      const b = el("button", "", view.collapsed.has(i) ? "Expand inputs" : "Collapse inputs (" + view.subtree(i).size + ")");
      b.id = "collapse-button";
      b.addEventListener("click", () => activate(view, i));
      box.appendChild(b);
    }
    box.appendChild(el("h3", "", "Reads (blue) / feeds (orange)"));
    box.appendChild(el("div", "", count(view.up, i) + " nodes upstream, " + count(view.down, i) + " downstream"));
  }

  function count(next, start) {
    const seen = new Set([start]);
    const stack = [start];
    while (stack.length) for (const w of next[stack.pop()]) if (!seen.has(w)) { seen.add(w); stack.push(w); }
    return seen.size - 1;
  }

  let flashTimer = 0;
  function flash(text) {
    const note = document.getElementById("count");
    note.textContent = text;
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => { note.textContent = ""; updateCount(); }, 2500);
  }

  // --- tooltip -------------------------------------------------------------------------------

  const tooltip = document.getElementById("tooltip");

  function showTooltip(view, i, ev) {
    tooltip.replaceChildren();
    describe(view, i, tooltip, false);
    tooltip.hidden = false;
    moveTooltip(ev);
  }

  function moveTooltip(ev) {
    if (tooltip.hidden) return;
    const pad = 14;
    let x = ev.clientX + pad, y = ev.clientY + pad;
    const r = tooltip.getBoundingClientRect();
    if (x + r.width > window.innerWidth) x = Math.max(0, ev.clientX - r.width - pad);
    if (y + r.height > window.innerHeight) y = Math.max(0, ev.clientY - r.height - pad);
    tooltip.style.left = x + "px";
    tooltip.style.top = y + "px";
  }

  function hideTooltip() { tooltip.hidden = true; }

  // --- search --------------------------------------------------------------------------------

  let matches = [];
  let current = -1;

  function nodeMatches(v, i, q) {
    if (q[0] === "#") return String(i) === q.slice(1);
    if (q[0] === "/") {
      const hit = (p) => p === q || p.startsWith(q + "/");
      return (v.p && hit(v.p)) || (v.o || []).some((o) => origins[o] && hit(origins[o][0]));
    }
    const has = (s) => typeof s === "string" && s.toLowerCase().includes(q);
    if (has(v.l) || has(v.f) || has(v.n) || has(v.s)) return true;
    if ((v.v || []).some((val) => has(val.name) || has(val.id))) return true;
    return (v.o || []).some((o) => origins[o] && has(origins[o][1]));
  }

  function search(text) {
    for (const pane of panes) pane.main.clearMarks(["match", "current"]);
    matches = [];
    current = -1;
    const q = text.trim().toLowerCase();
    if (q) {
      for (const pane of panes) {
        pane.main.graph.nodes.forEach((v, i) => {
          if (nodeMatches(v, i, q)) {
            matches.push({view: pane.main, i: i});
            pane.main.nodeEls[i].classList.add("match");
          }
        });
      }
    }
    updateCount();
    if (matches.length) go(0);
  }

  function go(k) {
    if (!matches.length) return;
    if (current >= 0) matches[current].view.nodeEls[matches[current].i].classList.remove("current");
    current = (k + matches.length) % matches.length;
    const m = matches[current];
    m.view.reveal(m.i);
    m.view.nodeEls[m.i].classList.add("current");
    m.view.pane.centreOn(m.view, m.i);
    selectNode(m.view, m.i);
    updateCount();
  }

  function updateCount() {
    const box = document.getElementById("count");
    const q = document.getElementById("search").value.trim();
    box.textContent = !q ? "" : matches.length ? (current + 1) + " of " + matches.length : "no match";
  }

  // --- what each rewrite pass replaced (--rewritten) -----------------------------------------

  function showPasses() {
    if (!data.passes) return;
    const box = document.getElementById("passes");
    box.hidden = false;
    box.appendChild(el("h3", "", "What each pass replaced"));
    const shown = 200;
    for (const pass of data.passes) {
      const section = el("div", "pass");
      const rules = Object.keys(pass.applied || {}).map((r) => r + " \u00d7" + pass.applied[r]).join(", ");
      const head = el("div", "pass-head", pass.name + " \u2014 " + pass.changes.length + " replacement" +
                      (pass.changes.length === 1 ? "" : "s") + (rules ? " (" + rules + ")" : ""));
      section.appendChild(head);
      const list = el("div", "changes");
      const addChanges = (from, to) => {
        for (const change of pass.changes.slice(from, to)) list.appendChild(changeRow(change));
      };
      addChanges(0, shown);
      if (pass.changes.length > shown) {
        const more = el("button", "", "Show " + (pass.changes.length - shown) + " more");
        more.addEventListener("click", () => { more.remove(); addChanges(shown, pass.changes.length); });
        list.appendChild(more);
      }
      section.appendChild(list);
      box.appendChild(section);
    }
  }

  function changeRow(change) {
    const row = el("div", "change");
    const side = (nodes) => nodes.map((n) => n.op + (n.o.length ? " [" + n.o.map((o) => origins[o] ? origins[o][0] : "?").join(" ") + "]" : "")).join(", ");
    row.appendChild(el("span", "rule", change.r + ": "));
    row.appendChild(document.createTextNode(side(change.rm) + " \u2192 " + (change.add.length ? side(change.add) : "(nothing)")));
    row.addEventListener("click", () => {
      for (const r of document.querySelectorAll(".change.active")) r.classList.remove("active");
      row.classList.add("active");
      const set = new Set();
      for (const n of change.rm.concat(change.add)) for (const o of n.o) set.add(o);
      for (const pane of panes) {
        forEachView(pane.main, (w) => w.select(-1));
        const found = pane.main.link(set);
        pane.svg.classList.toggle("focus", found.length > 0);
        if (found.length) {
          pane.main.reveal(found[0]);
          pane.centreOn(pane.main, found[0]);
        }
      }
    });
    return row;
  }

  // --- start ---------------------------------------------------------------------------------

  document.getElementById("title").textContent = data.title || "graph";
  document.getElementById("layout-note").textContent = "layout: " + (data.layout || "");
  data.panes.forEach((spec, k) => panes.push(new Pane(k, spec)));
  showPasses();
  const fitAll = () => panes.forEach((p) => p.fit());
  fitAll();

  const searchBox = document.getElementById("search");
  let searchTimer = 0;
  searchBox.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => search(searchBox.value), 150);
  });
  searchBox.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      clearTimeout(searchTimer);
      if (matches.length === 0 || ev.target.dataset.last !== searchBox.value) {
        search(searchBox.value);
        ev.target.dataset.last = searchBox.value;
      } else {
        go(current + (ev.shiftKey ? -1 : 1));
      }
    } else if (ev.key === "Escape") {
      searchBox.value = "";
      search("");
    }
  });
  document.getElementById("next").addEventListener("click", () => go(current + 1));
  document.getElementById("prev").addEventListener("click", () => go(current - 1));
  document.getElementById("fit").addEventListener("click", fitAll);
  document.getElementById("expand-all").addEventListener("click", () => {
    for (const pane of panes) {
      for (const k of Array.from(pane.main.children.keys())) closeInner(pane.main, k);
      pane.main.expandAll();
    }
    if (selection) showDetails(selection.view, selection.i);
  });
  document.getElementById("help-button").addEventListener("click", () => {
    const help = document.getElementById("help");
    help.hidden = !help.hidden;
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.target === searchBox) return;
    if (ev.key === "/") { ev.preventDefault(); searchBox.focus(); }
    else if (ev.key === "f" || ev.key === "F") fitAll();
    else if (ev.key === "Escape") selectNode(null, -1);
    else if (ev.key === "+" || ev.key === "=" || ev.key === "-") {
      for (const p of panes) {
        const r = p.svg.getBoundingClientRect();
        p.zoomAt(ev.key === "-" ? 1 / 1.25 : 1.25, r.width / 2, r.height / 2);
      }
    }
  });

  // For tests and the curious: how long the page took to draw, and what it drew.
  window.kilnView = {
    loadMs: performance.now() - started,
    nodes: panes.reduce((n, p) => n + p.main.graph.nodes.length, 0),
  };
  document.body.setAttribute("data-ready", "1");
})();
