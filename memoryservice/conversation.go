package memoryservice

import (
	"encoding/json"
	"strconv"

	"github.com/agentmemory/agentmemory/agent"
)

// maxInputItems caps the conversation items of update_memories and
// search_memories.
const maxInputItems = 1000

// inputItem is a conversation item of update_memories or search_memories:
// a Responses API message, whose content is a string or a list of parts.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// itemText returns the text of items[i] and whether it is kept: user and
// assistant messages are; system and developer messages are skipped.
func itemText(i int, it inputItem) (string, agent.Role, bool, error) {
	param := "items[" + strconv.Itoa(i) + "]"
	if it.Type != "" && it.Type != "message" {
		return "", "", false, badRequest(param+".type", "%q: only \"message\" items are supported", it.Type)
	}
	var role agent.Role
	switch it.Role {
	case "user":
		role = agent.RoleUser
	case "assistant":
		role = agent.RoleAssistant
	case "system", "developer":
		return "", "", false, nil
	case "":
		return "", "", false, badRequest(param+".role", "required")
	default:
		return "", "", false, badRequest(param+".role", "%q: user, assistant, system or developer", it.Role)
	}
	if len(it.Content) == 0 || string(it.Content) == "null" {
		return "", "", false, badRequest(param+".content", "required")
	}
	var text string
	if err := json.Unmarshal(it.Content, &text); err == nil {
		return text, role, text != "", nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return "", "", false, badRequest(param+".content", "a string or a list of text parts")
	}
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			if text != "" {
				text += "\n"
			}
			text += p.Text
		default:
			return "", "", false, badRequest(param+".content["+strconv.Itoa(j)+"].type", "%q: only text parts are supported", p.Type)
		}
	}
	return text, role, text != "", nil
}

// conversation returns the messages of items that are kept (itemText),
// or a 400 naming the first item that is wrong.
func conversation(items []inputItem) ([]agent.Message, error) {
	if len(items) > maxInputItems {
		return nil, badRequest("items", "%d items, at most %d", len(items), maxInputItems)
	}
	var msgs []agent.Message
	for i, it := range items {
		text, role, keep, err := itemText(i, it)
		if err != nil {
			return nil, err
		}
		if keep {
			msgs = append(msgs, agent.Message{Role: role, Text: text})
		}
	}
	return msgs, nil
}
