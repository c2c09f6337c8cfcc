// SPDX-License-Identifier: BSD-3-Clause
// The site opened from disk (file://): a browser refuses `new Worker(url)`
// for a file URL, so the theme's search, which runs in a worker, would stay
// at "Initializing search". Here a worker from a file URL runs instead in a
// hidden frame of the page's own origin: its postMessage reaches the page,
// the page's reaches its "message" listeners. Nothing is fetched from the
// network; over HTTP(S) this does nothing. (mkdocs.yml loads it before the
// theme's bundle; hooks/offline_search.py writes the index as a script.)
(function () {
  "use strict";
  if (location.protocol !== "file:") return;
  var RealWorker = window.Worker;

  function FrameWorker(url) {
    var target = new EventTarget();
    var queue = [];
    var ready = false;
    var frame = document.createElement("iframe");
    frame.style.display = "none";
    document.documentElement.appendChild(frame);
    var win = frame.contentWindow;
    // the worker's postMessage(data): to the page, copied into its realm
    win.postMessage = function (data) {
      var copy = structuredClone(data);
      setTimeout(function () {
        var event = new MessageEvent("message", { data: copy });
        if (typeof target.onmessage === "function") target.onmessage(event);
        target.dispatchEvent(event);
      }, 0);
    };
    function deliver(data) {
      win.dispatchEvent(new win.MessageEvent("message", { data: win.structuredClone(data) }));
    }
    var script = win.document.createElement("script");
    script.src = new URL(url, location.href).href;
    script.onload = function () {
      ready = true;
      queue.splice(0).forEach(deliver);
    };
    script.onerror = function () {
      target.dispatchEvent(new Event("error"));
    };
    win.document.documentElement.appendChild(script);
    target.postMessage = function (data) {
      if (ready) deliver(data);
      else queue.push(data);
    };
    target.terminate = function () {
      frame.remove();
    };
    return target;
  }

  window.Worker = function (url, options) {
    var href = new URL(url, location.href);
    if (href.protocol !== "file:") return new RealWorker(url, options);
    return FrameWorker(href.href);
  };
})();
