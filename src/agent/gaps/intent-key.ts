/**
 * Intent keys name what a user wanted, so gaps about the same thing cluster together:
 * the routing key normalised (lowercase, hyphens, bounded length), or, when the model
 * gave none, a deterministic key from the user's words (Chinese and English).
 */
import { slugFromWords, words } from "../../knowledge/keywords.js";

export const INTENT_KEY_MAX_LENGTH = 48;

export function normalizeIntentKey(modelKey: string, userText: string): string {
  const fromModel = slugFromWords(modelKey.split(/[\s_\-/.]+/).filter(Boolean), 6, INTENT_KEY_MAX_LENGTH);
  if (fromModel) return fromModel;
  return slugFromWords(words(userText), 4, INTENT_KEY_MAX_LENGTH) || "unknown";
}
