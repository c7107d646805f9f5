/** The locale tables, where the agent's modules have always imported them from (they live in src/locale/). */
export { modelErrorWords, modelFailureText, text, TEXT_TABLES, type Locale, type TextKey } from "../locale/texts.js";
