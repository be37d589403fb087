import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/lib/**", "**/dist/**", "**/node_modules/**", "**/jest.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Plain CommonJS scripts the tools run with node itself (no build step).
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", __dirname: "readonly", process: "readonly", setTimeout: "readonly", setInterval: "readonly", Buffer: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // Examples a reader runs with node as ES modules (docs/examples/*.mjs).
    files: ["**/*.mjs"],
    languageOptions: { sourceType: "module", globals: { process: "readonly", console: "readonly", Buffer: "readonly" } },
  },
  {
    // The API reference page's script, run by the browser beside swagger-ui's bundle.
    files: ["packages/web/public/**/*.js"],
    languageOptions: { sourceType: "script", globals: { window: "readonly", SwaggerUIBundle: "readonly" } },
  },
  {
    files: ["**/*.ts", "**/*.tsx"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    files: ["functions/src/**/*.ts"],
    ignores: ["functions/src/**/*.test.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='doc'][arguments.length>0]",
          message: "Address documents with documentAt(collection, id) from core/documents: it refuses ids Firestore cannot take.",
        },
      ],
    },
  },
);
