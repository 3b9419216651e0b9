/** A task-board form of every mapping (two pages), its answers, and the Private answer to look for. */
export const ROADMAP = "5f1a0000000000000000b001"
export const APPLICATIONS = "5f1a0000000000000000b002"
export const SECRET = "secret-7f3a@example.com"

const msg = (string: string, taskboard_mapping: string, alias = "") => ({ type: "message", string, char_limit: [1, 200], alias, taskboard_mapping })

export const BOARD_STEPS = [
  msg("What should we call it?", "Title"),
  msg("Describe it", "Description", "Why"),
  msg("Which area?", "List"),
  msg("Tags", "Label"),
  msg("Your email", "Private", "Email"),
  msg("Screenshot", "Attachment", "Shot"),
  msg("How did you hear?", "Description")
]

export const BOARD_ANSWERS = ["Dark mode", "Eyes hurt at night", "Backlog", "Bug", SECRET, "https://cdn.example/a.png", "A friend"]
