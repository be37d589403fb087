import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

// Every asset is bundled and content-hashed under assets/ (served immutable, firebase.json);
// nothing is fetched from another site at run time.
export default defineConfig({
  plugins: [preact()],
  build: { outDir: "../../hosting", assetsDir: "assets", assetsInlineLimit: 0, target: "es2022" },
});
