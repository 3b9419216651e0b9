/**
 * A form's start message (forms-runtime.md §2), pure: an embed with the form's title and colour and
 * a Start button whose custom id the runtime answers (`f:start:<workflow_id>`, FormRuntime.ts).
 */
import type { StoredForm } from "../../domain/forms/Form.ts"
import type { PlatformMessageBody } from "../platform/ChatPlatform.ts"
import { buttonRow } from "./Interaction.ts"

export const startCustomId = (workflowId: number) => `f:start:${workflowId}`

/** `#rrggbb` → the platform's RGB integer (0 for anything else). */
export const colorOf = (hex: string) => (/^#[0-9a-fA-F]{6}$/.test(hex) ? Number.parseInt(hex.slice(1), 16) : 0)

export const startMessage = (form: Pick<StoredForm, "workflow_id" | "title" | "color_hex">): PlatformMessageBody => ({
  embeds: [{ title: form.title, description: "Press **Start** to fill this form.", color: colorOf(form.color_hex) }],
  components: [buttonRow([{ label: "Start", custom_id: startCustomId(form.workflow_id), style: 1 }])],
  allowed_mentions: { parse: [] }
})

/** Channel types a form may be published in: text (0) and news (5). */
export const PUBLISHABLE_CHANNEL_TYPES: ReadonlyArray<number> = [0, 5]
