// The API reference: Swagger UI (served from this site, no CDN) rendering the document the API
// itself serves, so the page is always the deployed contract.
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#reference",
  // Deep links put a link inside each operation's toggle button, a control within a control that
  // assistive technology cannot reach (axe-core: nested-interactive); operations open by click.
  deepLinking: false,
  displayOperationId: true,
  docExpansion: "list",
  // The default validator badge calls an outside service; the document is linted in CI instead.
  validatorUrl: null,
  onComplete: () => {
    // Swagger UI's server picker has a caption but no label of its own.
    window.document.getElementById("servers")?.setAttribute("aria-label", "Server");
  },
});
