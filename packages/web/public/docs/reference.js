// The API reference: Swagger UI (served from this site, no CDN) rendering the document the API
// itself serves, so the page is always the deployed contract.
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#reference",
  deepLinking: true,
  displayOperationId: true,
  docExpansion: "list",
  // The default validator badge calls an outside service; the document is linted in CI instead.
  validatorUrl: null,
});
