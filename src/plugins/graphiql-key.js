// Runs in the browser, after GraphiQL's bundle and before it renders (inlined by graphiql.ts).
// GraphiQL keeps headers per tab and, by default, in localStorage; the PIM key is one per user.
// Tested in Chromium by test/ecosystem/graphiql.test.ts.
(() => {
  const persistFlag = 'graphiql:shouldPersistHeaders';
  // Headers stay out of storage until the user turns on "Persist headers" in GraphiQL's settings.
  if (localStorage.getItem(persistFlag) === null) localStorage.setItem(persistFlag, 'false');

  /** The X-API-KEY value in a headers editor's text; undefined when the text is not a JSON object. */
  const keyIn = (text) => {
    try {
      const headers = JSON.parse(text || '{}');
      const name = Object.keys(headers).find((header) => header.toLowerCase() === 'x-api-key');
      return name === undefined ? '' : String(headers[name]);
    } catch {
      return undefined;
    }
  };
  /** The open tab as GraphiQL stored it (its query, variables and headers); undefined on a first visit. */
  const storedActiveTab = () => {
    try {
      const { tabs, activeTabIndex } = JSON.parse(localStorage.getItem('graphiql:tabState'));
      return tabs[activeTabIndex];
    } catch {
      return undefined;
    }
  };
  /**
   * With headers persisted, the key a reload starts with: the open tab's, else the first stored tab's that has one
   * (the key is stored with the tab it was typed in, which need not be the open one).
   */
  const storedKey = () => {
    if (localStorage.getItem(persistFlag) !== 'true') return '';
    const own = keyIn(localStorage.getItem('graphiql:headers'));
    if (own) return own;
    try {
      const { tabs } = JSON.parse(localStorage.getItem('graphiql:tabState'));
      for (const tab of tabs) {
        const typed = keyIn(tab.headers);
        if (typed) return typed;
      }
    } catch {
      // Nothing stored, or not GraphiQL's: no key.
    }
    return '';
  };
  // The last key entered in any tab; after a reload with headers persisted, the one stored (storedKey).
  let key = storedKey();
  // The key in the headers editor's text as last seen: what an edit changes, or leaves as it was.
  let shown;

  // A request from a tab whose X-API-KEY is empty carries the key entered last.
  const send = window.fetch;
  window.fetch = (input, init) => {
    const request = new Request(input, init);
    if (!key || request.headers.get('x-api-key') || new URL(request.url).pathname !== location.pathname) {
      return send(input, init);
    }
    const headers = new Headers(request.headers);
    headers.set('x-api-key', key);
    return send(new Request(request, { headers }));
  };

  // GraphiQL reopens the stored tabs on the one matching the query, variables and headers it is
  // given, and adds a tab when none does (Yoga's page gives its welcome text). Given the stored
  // active tab's own, it reopens them as they were; a first visit opens the preset tabs on the first.
  // A link's query (`?query=`, which GraphiQL writes into the address bar as the query is edited, so a reload has
  // the open tab's own) opens in a tab of its own, as Yoga's page opens it, unless it is the open tab's.
  const open = storedActiveTab();
  const linked = new URL(location.href).searchParams.get('query');
  const link = linked && linked !== open?.query ? linked : undefined;
  const render = YogaGraphiQL.renderYogaGraphiQL;
  YogaGraphiQL.renderYogaGraphiQL = (root, options) =>
    render(root, {
      ...options,
      ...(link !== undefined
        ? { initialQuery: link, initialVariables: '', initialHeaders: undefined }
        : {
            initialQuery: open ? (open.query ?? '') : null,
            initialVariables: open ? (open.variables ?? '') : options.defaultTabs?.[0]?.variables,
            initialHeaders: open ? (open.headers ?? '') : undefined,
          }),
      onEditHeaders(text) {
        const now = keyIn(text);
        if (now === undefined) return;
        const before = shown;
        shown = now;
        // GraphiQL rewrites the editor itself when tabs change; only the user's typing has its focus. Only a
        // change of the key itself counts: other headers typed beside an empty key (a preset's slot) leave it,
        // and a key erased is gone.
        if (now !== before && document.activeElement?.closest('.graphiql-editor-tool')) key = now;
      },
    });
})();
