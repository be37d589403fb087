export function activate(app) {
  app.notify("Hello from a Marketplace module.");
}
