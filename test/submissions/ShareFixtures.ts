/** A submission to share: one step of each mapping (and an unmapped one), and a Private answer to look for. */
import type { ShareForm, ShareInput, ShareStep } from "../../src/services/submissions/Share.ts"

export const SECRET = "secret-7f3a@example.com"
export const SECRET_URL = "https://private.example/passport-7f3a.png"

export const STEPS: ReadonlyArray<ShareStep> = [
  { step_id: "s1", string: "What should we call it?", alias: "Title", taskboard_mapping: "Title" },
  { step_id: "s2", string: "Describe it", alias: "Why", taskboard_mapping: "Description" },
  { step_id: "s3", string: "Which area?", alias: "", taskboard_mapping: "List" },
  { step_id: "s4", string: "Tags", alias: "", taskboard_mapping: "Label" },
  { step_id: "s5", string: "Screenshot", alias: "Shot", taskboard_mapping: "Attachment" },
  { step_id: "s6", string: "Your email", alias: "Email", taskboard_mapping: "Private" },
  { step_id: "s7", string: "Anything else?", alias: "", taskboard_mapping: "" },
  { step_id: "s8", string: "How did you hear?", alias: " ", taskboard_mapping: "Description" },
  { step_id: "s9", string: "Proof", alias: "", taskboard_mapping: "Private" }
]

export const ANSWERS: ShareInput["answers"] = {
  s1: "Dark mode",
  s2: "Eyes hurt at night",
  s3: "Backlog",
  s4: ["UI", "Accessibility"],
  s5: "https://cdn.example/a.png see https://cdn.example/b.png",
  s6: SECRET,
  s7: "Thanks",
  s8: "A friend",
  s9: SECRET_URL
}

export const FORM: ShareForm = {
  title: "Feature requests",
  color_hex: "#00d084",
  taskboard_integration: false,
  anonymize: false,
  highlight_attachments: false,
  extended_embed: false,
  disable_upvote: false,
  disable_downvote: false,
  public_mentions: [],
  steps: STEPS
}

export const CARD_URL = "https://trello.com/c/Sb000001/1-dark-mode"

export const input = (form: Partial<ShareForm> = {}, rest: Partial<Omit<ShareInput, "form">> = {}): ShareInput => ({
  submission_id: "sub-1",
  form: { ...FORM, ...form },
  answers: ANSWERS,
  member: { id: "100000000000000001", name: "Alice", avatar_url: "https://cdn.example/avatar.png" },
  priority: "high",
  card_url: CARD_URL,
  votes: { up: 3, down: 1 },
  ...rest
})
