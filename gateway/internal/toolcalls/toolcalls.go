// Package toolcalls assembles the tool calls of a streamed Chat Completions
// answer from the fragments its chunks carry.
//
// # Fragments
//
// Each chunk's delta.tool_calls holds fragments. OpenAI's API sends a call's
// id and name in its first fragment and pieces of its arguments in the
// following ones, all under the call's index. Other servers differ: some send
// each call whole in a chunk of its own, every one at index 0, and some send
// no index at all. A Calls tells them apart the same way whoever reads the
// stream: a fragment belongs to the call open at its index (its position in
// the chunk when it has none), unless it carries an id other than that
// call's, which opens a new call.
package toolcalls

// Fragment is one entry of a chunk's delta.tool_calls, as far as it is read.
type Fragment struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Call is one tool call assembled from its fragments.
type Call struct {
	ID        string // as the server gave it; empty if it gave none
	Name      string
	Arguments string
}

// Calls holds the calls of one answer in the order they opened. The zero
// value is ready to use.
type Calls struct {
	list []Call
	open map[int]int // index -> position in list of the call open there
}

// Add takes the fragments of one chunk in order and returns, for each, the
// position in List of the call it belongs to, or -1 for a fragment with a
// negative index, which is dropped.
func (c *Calls) Add(frags []Fragment) []int {
	if c.open == nil {
		c.open = make(map[int]int)
	}
	pos := make([]int, len(frags))
	for i, f := range frags {
		idx := index(f, i)
		if idx < 0 {
			pos[i] = -1
			continue
		}
		p, ok := c.open[idx]
		if !ok || (f.ID != "" && c.list[p].ID != "" && f.ID != c.list[p].ID) {
			p = len(c.list)
			c.list = append(c.list, Call{})
			c.open[idx] = p
		}
		call := &c.list[p]
		if call.ID == "" {
			call.ID = f.ID
		}
		if call.Name == "" {
			call.Name = f.Function.Name
		}
		call.Arguments += f.Function.Arguments
		pos[i] = p
	}
	return pos
}

// Opens reports, for each fragment of a chunk not yet added, whether Add
// would open a new call with it. Nothing is changed.
func (c *Calls) Opens(frags []Fragment) []bool {
	ids := make(map[int]string, len(c.open))
	for idx, p := range c.open {
		ids[idx] = c.list[p].ID
	}
	opens := make([]bool, len(frags))
	for i, f := range frags {
		idx := index(f, i)
		if idx < 0 {
			continue
		}
		id, ok := ids[idx]
		if !ok || (f.ID != "" && id != "" && f.ID != id) {
			opens[i] = true
			ids[idx] = f.ID
		} else if id == "" {
			ids[idx] = f.ID
		}
	}
	return opens
}

// List returns the calls in the order they opened. The slice is the
// Calls' own until the next Add.
func (c *Calls) List() []Call { return c.list }

// Len returns the number of calls.
func (c *Calls) Len() int { return len(c.list) }

func index(f Fragment, i int) int {
	if f.Index != nil {
		return *f.Index
	}
	return i
}
