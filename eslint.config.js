// ESLint's recommended rules for the project's own JavaScript: the span selector (runs in the
// browser) and its Node tests. Component functions stay short enough to read in one screen.
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import globals from "globals";

export default defineConfig([
  globalIgnores([".venv/", "data/", "test-artifacts/"]),
  js.configs.recommended,
  {
    files: ["components/**/*.js"],
    languageOptions: { globals: globals.browser },
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ["tests/js/**/*.js", "eslint.config.js"],
    languageOptions: { globals: globals.node },
  },
]);
