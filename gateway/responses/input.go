package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
)

// inputItem is one item of a Responses input array: a message (its type
// may be omitted), a function call or a function call's output.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// contentPart is one part of an input message's content, or of a function
// call output given as parts.
type contentPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	Refusal  *string `json:"refusal"`
	ImageURL string  `json:"image_url"`
	FileID   string  `json:"file_id"`
	FileData string  `json:"file_data"`
	FileURL  string  `json:"file_url"`
	Filename string  `json:"filename"`
	Detail   string  `json:"detail"`
}

// parseInput translates the input, a string or an array of items, into
// chat messages and agent messages.
func parseInput(r *Request, v json.RawMessage) error {
	var text string
	if json.Unmarshal(v, &text) == nil {
		r.messages = append(r.messages, chatMessage{Role: "user", Content: jsonString(text)})
		r.Input = append(r.Input, agent.UserText(text))
		return nil
	}
	var items []json.RawMessage
	if err := decode("input", v, &items, "a string or an array of items"); err != nil {
		return err
	}
	for i, raw := range items {
		if err := r.addItem(raw); err != nil {
			return fmt.Errorf("input[%d]: %w", i, err)
		}
	}
	return nil
}

// addItem translates one input item.
func (r *Request) addItem(raw json.RawMessage) error {
	var it inputItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return objectError("an input item", raw, err)
	}
	switch it.Type {
	case "message", "":
		return r.addMessage(it)
	case "function_call":
		return r.addFunctionCall(it)
	case "function_call_output":
		return r.addFunctionCallOutput(it)
	case "reasoning":
		// A reasoning item is a reasoning model's earlier output, sent back
		// for OpenAI's servers to decrypt; a Chat Completions upstream has
		// no use for it.
		return nil
	case "item_reference":
		return fmt.Errorf("%w: input item type \"item_reference\" (the item is stored on OpenAI's servers)", ErrUnsupported)
	default:
		return fmt.Errorf("%w: input item type %q", ErrUnsupported, it.Type)
	}
}

// addMessage translates a message item.
func (r *Request) addMessage(it inputItem) error {
	var role agent.Role
	switch it.Role {
	case "user":
		role = agent.RoleUser
	case "assistant":
		role = agent.RoleAssistant
	case "system", "developer":
		// Developer is OpenAI's newer name for system; servers such as
		// Ollama and vLLM know only system.
		role = agent.RoleSystem
	case "":
		return fmt.Errorf("%w: message has no role", ErrInvalid)
	default:
		return fmt.Errorf("%w: message role %q, want user, assistant, system or developer", ErrInvalid, it.Role)
	}
	if len(it.Content) == 0 || isNull(it.Content) {
		return fmt.Errorf("%w: message has no content", ErrInvalid)
	}
	var text string
	if json.Unmarshal(it.Content, &text) == nil {
		r.messages = append(r.messages, chatMessage{Role: string(role), Content: it.Content})
		r.Input = append(r.Input, agent.Message{Role: role, Text: text})
		return nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(it.Content, &parts); err != nil {
		return fmt.Errorf("%w: message content must be a string or an array of parts, got %s", ErrInvalid, abbrev(it.Content))
	}
	chat := make([]map[string]any, 0, len(parts))
	var texts []string
	for j, raw := range parts {
		cp, t, err := chatPart(role, raw)
		if err != nil {
			return fmt.Errorf("content[%d]: %w", j, err)
		}
		chat = append(chat, cp)
		if t != "" {
			texts = append(texts, t)
		}
	}
	content := mustJSON(chat)
	if len(chat) == 1 && chat[0]["type"] == "text" {
		content = jsonString(chat[0]["text"].(string))
	}
	r.messages = append(r.messages, chatMessage{Role: string(role), Content: content})
	r.Input = append(r.Input, agent.Message{Role: role, Text: strings.Join(texts, "\n")})
	return nil
}

// chatPart translates one content part of a message from role and returns
// its text, if any.
func chatPart(role agent.Role, raw json.RawMessage) (map[string]any, string, error) {
	var p contentPart
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, "", objectError("a content part", raw, err)
	}
	switch p.Type {
	case "input_text", "output_text":
		if p.Text == nil {
			return nil, "", fmt.Errorf("%w: %s part has no text", ErrInvalid, p.Type)
		}
		return map[string]any{"type": "text", "text": *p.Text}, *p.Text, nil
	case "refusal":
		if role != agent.RoleAssistant {
			return nil, "", fmt.Errorf("%w: refusal part in a %s message", ErrInvalid, role)
		}
		if p.Refusal == nil {
			return nil, "", fmt.Errorf("%w: refusal part has no refusal", ErrInvalid)
		}
		return map[string]any{"type": "refusal", "refusal": *p.Refusal}, "", nil
	case "input_image":
		if role != agent.RoleUser {
			return nil, "", fmt.Errorf("%w: input_image part in a %s message", ErrInvalid, role)
		}
		if p.ImageURL == "" {
			if p.FileID != "" {
				return nil, "", fmt.Errorf("%w: input_image by file_id (the file is stored on OpenAI's servers)", ErrUnsupported)
			}
			return nil, "", fmt.Errorf("%w: input_image part has no image_url", ErrInvalid)
		}
		img := map[string]string{"url": p.ImageURL}
		if p.Detail != "" {
			img["detail"] = p.Detail
		}
		return map[string]any{"type": "image_url", "image_url": img}, "", nil
	case "input_file":
		if role != agent.RoleUser {
			return nil, "", fmt.Errorf("%w: input_file part in a %s message", ErrInvalid, role)
		}
		if p.FileURL != "" {
			return nil, "", fmt.Errorf("%w: input_file by file_url", ErrUnsupported)
		}
		if p.FileID == "" && p.FileData == "" {
			return nil, "", fmt.Errorf("%w: input_file part has no file_id or file_data", ErrInvalid)
		}
		f := struct {
			FileID   string `json:"file_id,omitempty"`
			FileData string `json:"file_data,omitempty"`
			Filename string `json:"filename,omitempty"`
		}{p.FileID, p.FileData, p.Filename}
		return map[string]any{"type": "file", "file": f}, "", nil
	case "":
		return nil, "", fmt.Errorf("%w: content part has no type", ErrInvalid)
	default:
		return nil, "", fmt.Errorf("%w: content part type %q", ErrUnsupported, p.Type)
	}
}

// addFunctionCall translates a function call item: it joins the assistant
// message just before it, as Chat Completions carries an answer's text and
// tool calls in one message, or starts an assistant message of its own.
func (r *Request) addFunctionCall(it inputItem) error {
	if it.CallID == "" {
		return fmt.Errorf("%w: function_call has no call_id", ErrInvalid)
	}
	if it.Name == "" {
		return fmt.Errorf("%w: function_call has no name", ErrInvalid)
	}
	args := ""
	if it.Arguments != nil {
		args = *it.Arguments
	}
	tc := chatToolCall{ID: it.CallID, Type: "function", Function: chatFunction{Name: it.Name, Arguments: args}}
	atc := agent.ToolCall{ID: it.CallID, Name: it.Name, Arguments: agent.ToolArguments(args)}
	n := len(r.messages)
	if n > 0 && r.messages[n-1].Role == "assistant" && len(r.Input) > 0 && r.Input[len(r.Input)-1].Role == agent.RoleAssistant {
		last := &r.messages[n-1]
		last.ToolCalls = append(last.ToolCalls, tc)
		r.Input[len(r.Input)-1].ToolCalls = append(r.Input[len(r.Input)-1].ToolCalls, atc)
		return nil
	}
	r.messages = append(r.messages, chatMessage{Role: "assistant", Content: jsonNull, ToolCalls: []chatToolCall{tc}})
	r.Input = append(r.Input, agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{atc}})
	return nil
}

// addFunctionCallOutput translates a function call output item into a tool
// message. Its output is a string or an array of text parts.
func (r *Request) addFunctionCallOutput(it inputItem) error {
	if it.CallID == "" {
		return fmt.Errorf("%w: function_call_output has no call_id", ErrInvalid)
	}
	if len(it.Output) == 0 || isNull(it.Output) {
		return fmt.Errorf("%w: function_call_output has no output", ErrInvalid)
	}
	var text string
	if json.Unmarshal(it.Output, &text) != nil {
		var parts []contentPart
		if err := json.Unmarshal(it.Output, &parts); err != nil {
			return fmt.Errorf("%w: function_call_output output must be a string or an array of parts, got %s", ErrInvalid, abbrev(it.Output))
		}
		var texts []string
		for j, p := range parts {
			switch {
			case p.Type == "input_text" && p.Text != nil:
				texts = append(texts, *p.Text)
			case p.Type == "input_text":
				return fmt.Errorf("%w: output[%d]: input_text part has no text", ErrInvalid, j)
			default:
				return fmt.Errorf("%w: output[%d]: part type %q in a function_call_output (a tool message carries only text)", ErrUnsupported, j, p.Type)
			}
		}
		text = strings.Join(texts, "\n")
	}
	r.messages = append(r.messages, chatMessage{Role: "tool", Content: jsonString(text), ToolCallID: it.CallID})
	r.Input = append(r.Input, agent.ToolResult(it.CallID, text))
	return nil
}
